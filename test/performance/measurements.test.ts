import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { appTest, buildTenant, expectPlatformError, type TestApp } from '../support/kit.ts';
import { expectStatus, setup } from '../assertion/helpers.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const idp = 'https://idp.example';
const at = (iso: string) => `${iso}T12:00:00Z`;

describe('performance measurements', () => {
  test('a batch is recorded in order, creates entities on first use, and dedupes by external_id', async () => {
    const { api } = await setup(t);
    const batch = expectStatus(
      await api.measure([
        { external_user_id: 'alice', issuer: idp, metric: 'sales', value: 2.5, occurred_at: at('2026-03-02'), external_id: 'm-1' },
        { external_user_id: 'alice', issuer: idp, metric: 'sales', value: 1, occurred_at: at('2026-03-03') },
        { external_user_id: 'bob', issuer: idp, metric: 'views', value: 10, occurred_at: at('2026-03-03'), external_id: 'm-2' },
        { external_user_id: 'bob', issuer: idp, metric: 'views', value: 99, occurred_at: at('2026-03-04'), external_id: 'm-2' },
      ]),
      201,
    );
    expect(batch).toMatchObject({ object: 'measurement_batch', recorded: 3, duplicates: 1 });
    const [a1, a2, b1, b2] = batch.data;
    expect(a1).toMatchObject({
      id: expect.stringMatching(/^msr_[0-9a-f]{32}$/),
      object: 'measurement',
      entity: expect.stringMatching(/^ent_[0-9a-f]{32}$/),
      metric: 'sales',
      value: 2.5,
      occurred_at: '2026-03-02T12:00:00.000Z',
      program: null,
      external_id: 'm-1',
      duplicate: false,
    });
    expect(a2.entity).toBe(a1.entity);
    expect(b1.entity).not.toBe(a1.entity);
    // The repeat within the batch answers the first record (value 10), and adds nothing.
    expect(b2).toEqual({ ...b1, duplicate: true });
    // A later batch repeating m-1 adds nothing either.
    const again = expectStatus(
      await api.measure([{ entity: a1.entity, metric: 'sales', value: 1000, occurred_at: at('2026-03-05'), external_id: 'm-1' }]),
      201,
    );
    expect(again).toMatchObject({ recorded: 0, duplicates: 1, data: [{ ...a1, duplicate: true }] });
    const rollups = expectStatus(await api.rollups({ entity: a1.entity, metric: 'sales', window: 'month' }), 200);
    expect(rollups).toEqual({
      object: 'list',
      data: [
        {
          object: 'performance_rollup',
          metric: 'sales',
          window: 'month',
          period_start: '2026-03-01T00:00:00.000Z',
          period_end: '2026-04-01T00:00:00.000Z',
          entity: a1.entity,
          program: null,
          value: 3.5,
          count: 2,
        },
      ],
      has_more: false,
    });
  });

  test('the same Idempotency-Key replays the first answer and records nothing twice', async () => {
    const { api } = await setup(t);
    const items = [{ external_user_id: 'k', issuer: idp, metric: 'sales', value: 5, occurred_at: at('2026-02-02') }];
    const first = await api.measure(items, { 'Idempotency-Key': 'batch-1' });
    const second = await api.measure(items, { 'Idempotency-Key': 'batch-1' });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    const rollups = expectStatus(await api.rollups({ entity: first.body.data[0].entity, metric: 'sales', window: 'day' }), 200);
    expect(rollups.data.map((r: any) => [r.period_start, r.value, r.count])).toEqual([['2026-02-02T00:00:00.000Z', 5, 1]]);
  });

  test('a bad item rejects the whole batch, naming it, and records nothing', async () => {
    const { api } = await setup(t);
    const good = { external_user_id: 'g', issuer: idp, metric: 'sales', value: 1, occurred_at: at('2026-01-05') };
    const future = new Date(t.clock.now().getTime() + 60_000).toISOString();
    const cases: [unknown, string, string][] = [
      [{ ...good, value: 'one' }, 'invalid_request', 'measurements.1.value'],
      [{ ...good, value: 1e16 }, 'invalid_request', 'measurements.1.value'],
      [{ ...good, metric: 'Sales' }, 'invalid_request', 'measurements.1.metric'],
      [{ ...good, metric: 'sa\u0000les' }, 'invalid_request', 'measurements.1.metric'],
      [{ ...good, occurred_at: future }, 'invalid_request', 'measurements.1.occurred_at'],
      [{ ...good, occurred_at: 'yesterday' }, 'invalid_request', 'measurements.1.occurred_at'],
      [{ ...good, external_id: 'a\u0000b' }, 'invalid_request', 'measurements.1.external_id'],
      [{ ...good, colour: 'red' }, 'invalid_request', 'measurements.1.colour'],
      [{ metric: 'sales', value: 1, occurred_at: at('2026-01-05') }, 'invalid_request', 'measurements.1.entity'],
      [{ ...good, entity: 'ent_00000000000000000000000000000000' }, 'invalid_request', 'measurements.1.external_user_id'],
    ];
    for (const [bad, code, param] of cases) {
      const res = await api.measure([good, bad]);
      expectPlatformError(res, 400, code, param);
    }
    expectPlatformError(
      await api.measure([
        good,
        { metric: 'sales', value: 1, occurred_at: good.occurred_at, entity: 'ent_00000000000000000000000000000000' },
      ]),
      404,
      'resource_missing',
      'measurements.1.entity',
    );
    expectPlatformError(
      await api.measure([good, { ...good, program: 'prog_00000000000000000000000000000000' }]),
      404,
      'resource_missing',
      'measurements.1.program',
    );
    expectPlatformError(await api.measure([]), 400, 'invalid_request', 'measurements');
    expectPlatformError(await api.measure(Array.from({ length: 501 }, () => good)), 400, 'invalid_request', 'measurements');
    expectPlatformError(
      await t.http.post('/v1/platform/performance/measurements', [good], { token: (await setup(t)).token }),
      400,
      'invalid_request',
    );
    // Nothing was recorded by any of them: `g` was never created either (its rollups list nothing).
    expect(expectStatus(await api.rollups({ external_user_id: 'g', issuer: idp, metric: 'sales', window: 'day' }), 200).data).toEqual([]);
    // 500 items is the limit, accepted.
    const many = Array.from({ length: 500 }, (_, i) => ({ ...good, external_user_id: `g${i % 7}`, value: i }));
    expect(expectStatus(await api.measure(many), 201).recorded).toBe(500);
  });

  test("another organization's entity or program is 404, and its measurements never show in rollups", async () => {
    const mine = await setup(t);
    const theirs = await setup(t);
    const program = expectStatus(await theirs.api.createProgram({ name: 'Theirs' }), 201);
    const recorded = expectStatus(
      await theirs.api.measure([{ external_user_id: 'x', issuer: idp, metric: 'sales', value: 7, occurred_at: at('2026-01-05') }]),
      201,
    );
    const entity = recorded.data[0].entity;
    const item = { metric: 'sales', value: 1, occurred_at: at('2026-01-05') };
    expectPlatformError(await mine.api.measure([{ ...item, entity }]), 404, 'resource_missing', 'measurements.0.entity');
    expectPlatformError(await mine.api.measure([{ ...item, entity: 'ent_x' }]), 404, 'resource_missing', 'measurements.0.entity');
    expectPlatformError(
      await mine.api.measure([{ ...item, external_user_id: 'x', issuer: idp, program: program.id }]),
      404,
      'resource_missing',
      'measurements.0.program',
    );
    expectPlatformError(await mine.api.rollups({ entity, metric: 'sales', window: 'day' }), 404, 'resource_missing', 'entity');
    expectPlatformError(
      await mine.api.rollups({ program: program.id, metric: 'sales', window: 'day' }),
      404,
      'resource_missing',
      'program',
    );
    expect(expectStatus(await mine.api.rollups({ metric: 'sales', window: 'day' }), 200).data).toEqual([]);
    expect(expectStatus(await mine.api.rollups({ external_user_id: 'x', issuer: idp, metric: 'sales', window: 'day' }), 200).data).toEqual(
      [],
    );
  });

  test('rollup inputs are validated; scopes are enforced', async () => {
    const { api } = await setup(t);
    expectPlatformError(await api.rollups({ metric: 'sales', window: 'year' }), 400, 'invalid_request', 'window');
    expectPlatformError(await api.rollups({ window: 'day' }), 400, 'invalid_request', 'metric');
    expectPlatformError(await api.rollups({ metric: 'sales', window: 'day', limit: 367 }), 400, 'invalid_request', 'limit');
    expectPlatformError(await api.rollups({ metric: 'sales', window: 'day', until: 'soon' }), 400, 'invalid_request', 'until');
    const { token } = await buildTenant(t, ['events:read']);
    const res = await t.http.post('/v1/platform/performance/measurements', { measurements: [] }, { token });
    expectPlatformError(res, 403, 'missing_scope');
    expectPlatformError(await t.http.get('/v1/platform/performance/rollups?metric=a&window=day', { token }), 403, 'missing_scope');
  });

  test('rollups per day, ISO week (from Monday) and month, filtered by program, paged with until', async () => {
    const { api } = await setup(t);
    const program = expectStatus(await api.createProgram({ name: 'P' }), 201);
    const other = expectStatus(await api.createProgram({ name: 'Q' }), 201);
    const s = { external_user_id: 'w', issuer: idp, metric: 'views' };
    // 2026-03-01 is a Sunday, 03-02 a Monday; 2026-02-28 a Saturday.
    const measured = [
      { ...s, value: 1, occurred_at: '2026-02-28T23:59:59Z' },
      { ...s, value: 2, occurred_at: '2026-03-01T00:00:00Z', program: program.id },
      { ...s, value: 4, occurred_at: '2026-03-01T23:00:00+05:00', program: other.id },
      { ...s, value: 8, occurred_at: '2026-03-02T00:00:00Z' },
    ];
    const { data } = expectStatus(await api.measure(measured), 201);
    const entity = data[0].entity;
    const sums = async (q: Record<string, unknown>) =>
      expectStatus(await api.rollups({ entity, metric: 'views', ...q }), 200).data.map((r: any) => [
        r.period_start.slice(0, 10),
        r.value,
        r.count,
      ]);
    expect(await sums({ window: 'day' })).toEqual([
      ['2026-03-02', 8, 1],
      ['2026-03-01', 6, 2],
      ['2026-02-28', 1, 1],
    ]);
    expect(await sums({ window: 'week' })).toEqual([
      ['2026-03-02', 8, 1],
      ['2026-02-23', 7, 3],
    ]);
    expect(await sums({ window: 'month' })).toEqual([
      ['2026-03-01', 14, 3],
      ['2026-02-01', 1, 1],
    ]);
    // A program's rollup: its own measurements and those naming no program.
    expect(await sums({ window: 'month', program: program.id })).toEqual([
      ['2026-03-01', 10, 2],
      ['2026-02-01', 1, 1],
    ]);
    const page = expectStatus(await api.rollups({ entity, metric: 'views', window: 'day', limit: 2 }), 200);
    expect(page.has_more).toBe(true);
    expect(page.data[1].period_end).toBe('2026-03-02T00:00:00.000Z');
    const next = expectStatus(
      await api.rollups({ entity, metric: 'views', window: 'day', limit: 2, until: page.data[1].period_start }),
      200,
    );
    expect(next).toMatchObject({ has_more: false, data: [{ period_start: '2026-02-28T00:00:00.000Z', value: 1 }] });
    expect(await sums({ window: 'day', since: '2026-03-01T10:00:00Z' })).toEqual([
      ['2026-03-02', 8, 1],
      ['2026-03-01', 6, 2],
    ]);
  });

  test('rollups equal a straightforward model whatever the arrival order (property)', async () => {
    const { api } = await setup(t);
    const day = 86_400_000;
    const base = Date.UTC(2025, 11, 20);
    const measurement = fc.record({
      offsetMs: fc.integer({ min: 0, max: 70 * day }),
      cents: fc.integer({ min: -100_000, max: 100_000 }),
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(measurement, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 4 }), async (items, batches) => {
        const subject = { external_user_id: `p-${run++}`, issuer: idp };
        const all = items.map((m) => ({
          ...subject,
          metric: 'score',
          value: m.cents / 100,
          occurred_at: new Date(base + m.offsetMs).toISOString(),
        }));
        // Arrival order: shuffled deterministically, in several batches.
        const shuffled = [...all].sort((a, b) => ((a.value * 7919) % 13) - ((b.value * 7919) % 13));
        const size = Math.ceil(shuffled.length / batches);
        for (let i = 0; i < shuffled.length; i += size) expectStatus(await api.measure(shuffled.slice(i, i + size)), 201);
        for (const window of ['day', 'week', 'month'] as const) {
          const model = new Map<string, { cents: number; count: number }>();
          for (const m of items) {
            const d = new Date(base + m.offsetMs);
            const start =
              window === 'day'
                ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
                : window === 'week'
                  ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - ((d.getUTCDay() + 6) % 7))
                  : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
            const key = new Date(start).toISOString();
            const slot = model.get(key) ?? { cents: 0, count: 0 };
            model.set(key, { cents: slot.cents + m.cents, count: slot.count + 1 });
          }
          const expected = [...model.entries()].sort(([a], [b]) => (a < b ? 1 : -1)).map(([k, v]) => [k, v.cents, v.count]);
          const got = expectStatus(await api.rollups({ ...subject, metric: 'score', window, limit: 100 }), 200).data;
          expect(got.map((r: any) => [r.period_start, Math.round(r.value * 100), r.count])).toEqual(expected);
          // Exact: the sum of hundredths is a whole number of hundredths.
          for (const r of got) expect(Math.abs(r.value * 100 - Math.round(r.value * 100))).toBeLessThan(1e-6);
        }
      }),
      { numRuns: 15 },
    );
  });

  test('GraphQL recordMeasurements and performanceRollups answer what REST answers', async () => {
    const { api, token } = await setup(t);
    const gql = (query: string, variables: Record<string, unknown>) => t.http.graphql(query, variables, { token });
    const res = await gql(
      `mutation($m: [MeasurementInput!]!) { recordMeasurements(measurements: $m) { recorded duplicates data { id entity metric value occurredAt program externalId duplicate createdAt } } }`,
      { m: [{ externalUserId: 'gq', issuer: idp, metric: 'sales', value: 3, occurredAt: at('2026-01-06'), externalId: 'gq-1' }] },
    );
    expect(res.body.errors, res.text).toBeUndefined();
    const batch = res.body.data.recordMeasurements;
    expect(batch).toMatchObject({
      recorded: 1,
      duplicates: 0,
      data: [{ metric: 'sales', value: 3, externalId: 'gq-1', duplicate: false }],
    });
    const viaRest = expectStatus(await api.rollups({ entity: batch.data[0].entity, metric: 'sales', window: 'week' }), 200);
    const rollups = await gql(
      `query($e: String, $w: PerformanceWindow!) { performanceRollups(entity: $e, metric: "sales", window: $w) { hasMore data { metric window periodStart periodEnd entity program value count } } }`,
      { e: batch.data[0].entity, w: 'WEEK' },
    );
    expect(rollups.body.errors, rollups.text).toBeUndefined();
    expect(rollups.body.data.performanceRollups).toEqual({
      hasMore: false,
      data: viaRest.data.map((r: any) => ({
        metric: r.metric,
        window: 'WEEK',
        periodStart: r.period_start,
        periodEnd: r.period_end,
        entity: r.entity,
        program: null,
        value: r.value,
        count: r.count,
      })),
    });
    const bad = await gql(`mutation($m: [MeasurementInput!]!) { recordMeasurements(measurements: $m) { recorded } }`, {
      m: [{ externalUserId: 'gq', issuer: idp, metric: 'BAD', value: 3, occurredAt: at('2026-01-06') }],
    });
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'invalid_request', param: 'measurements.0.metric' });
  });
});
