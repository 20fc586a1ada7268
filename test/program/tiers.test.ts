import { describe, expect } from 'vitest';
import { appTest, expectPlatformError, type TestApp } from '../support/kit.ts';
import { type Api, expectStatus, setup } from '../assertion/helpers.ts';
import { settled } from '../operation/helpers.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => {
  t = app;
  // Small batches, so a handful of enrollments proves the retier runs in several transactions.
  t.app.deps.config.operations.retierBatch = 2;
});

const idp = 'https://idp.example';
const ago = (ms: number) => new Date(t.clock.now().getTime() - ms).toISOString();
const SCOPES = [
  'programs:read',
  'program_requirements:write',
  'program_tiers:read',
  'program_tiers:write',
  'enrollments:read',
  'enrollments:write',
  'events:read',
  'performance:write',
];

/** An active enrollment in `programId` with `sales` measured at `value` this period. */
async function enrolled(api: Api, programId: string, user: string, value: number) {
  const e = expectStatus(await api.enroll({ program: programId, external_user_id: user, issuer: idp }), 201);
  expectStatus(await api.move(e.id, 'approve'), 200);
  expectStatus(await api.move(e.id, 'activate'), 200);
  if (value) expectStatus(await api.measure([{ entity: e.entity, metric: 'sales', value, occurred_at: ago(1000) }]), 201);
  return e as { id: string; entity: string };
}

const tierOf = async (api: Api, id: string) => expectStatus(await api.enrollment(id), 200).tier?.name ?? null;

describe('the tier ladder', () => {
  test('a ladder change answers 202 with program.retier, which places every active enrollment in bounded batches', async () => {
    const who = await setup(t, SCOPES);
    const { api, token } = who;
    const program = expectStatus(await api.createProgram({ name: 'Ladder' }), 201);
    const [none, low, mid, high, top] = [
      await enrolled(api, program.id, 'none', 0),
      await enrolled(api, program.id, 'low', 10),
      await enrolled(api, program.id, 'mid', 100),
      await enrolled(api, program.id, 'high', 1000),
      await enrolled(api, program.id, 'top', 5000),
    ];
    const post = (path: string, body?: unknown) => t.http.post(`/v1/platform/programs/${program.id}${path}`, body, { token });
    const bronze = await post('/tiers', { name: 'Bronze', metric: 'sales', threshold: 10, rate_bps: 100 });
    expect(bronze.status, bronze.text).toBe(202);
    expect(bronze.body).toMatchObject({
      tier: {
        id: expect.stringMatching(/^tier_[0-9a-f]{32}$/),
        object: 'program_tier',
        program: program.id,
        name: 'Bronze',
        metric: 'sales',
        threshold: 10,
        rate_bps: 100,
      },
      operation: { kind: 'program.retier', status: expect.stringMatching(/pending|running/) },
    });
    const op = await settled(t, { token } as never, bronze.body.operation.id);
    // Five active enrollments, two per transaction: three batches.
    expect(op).toMatchObject({ status: 'succeeded', result: { evaluated: 5 }, progress: { evaluated: 5, batches: 3 } });
    expect(await tierOf(api, none.id)).toBeNull();
    expect(await tierOf(api, low.id)).toBe('Bronze');
    const gold = expectStatus(await post('/tiers', { name: 'Gold', metric: 'sales', threshold: 1000, rate_bps: 300 }), 202);
    const silver = expectStatus(await post('/tiers', { name: 'Silver', metric: 'sales', threshold: 100, rate_bps: 200 }), 202);
    for (const change of [gold, silver]) expect((await settled(t, { token } as never, change.operation.id)).status).toBe('succeeded');
    expect(await Promise.all([none, low, mid, high, top].map((e) => tierOf(api, e.id)))).toEqual([
      null,
      'Bronze',
      'Silver',
      'Gold',
      'Gold',
    ]);
    const shown = expectStatus(await api.enrollment(mid.id), 200);
    expect(shown.tier).toEqual({ id: silver.tier.id, name: 'Silver', rate_bps: 200, metric: 'sales', threshold: 100, value: 100 });
    expect(shown.evaluation.trigger).toBe('tier_change');
    expect(shown.evaluation.tiers.map((r: any) => [r.threshold, r.reached])).toEqual([
      [10, true],
      [100, true],
      [1000, false],
    ]);
    const ladder = expectStatus(await t.http.get(`/v1/platform/programs/${program.id}/tiers`, { token }), 200);
    expect(ladder.data.map((r: any) => r.name)).toEqual(['Bronze', 'Silver', 'Gold']);

    // Moving a rung and removing one re-place everyone.
    const moved = expectStatus(await post(`/tiers/${gold.tier.id}`, { threshold: 5000, rate_bps: 350 }), 202);
    expect(moved.tier).toMatchObject({ threshold: 5000, rate_bps: 350, name: 'Gold' });
    await settled(t, { token } as never, moved.operation.id);
    expect(await tierOf(api, high.id)).toBe('Silver');
    expect(await tierOf(api, top.id)).toBe('Gold');
    const removed = await t.http.delete(`/v1/platform/programs/${program.id}/tiers/${bronze.body.tier.id}`, { token });
    expect(removed.status).toBe(202);
    expect(removed.body.tier).toEqual({ id: bronze.body.tier.id, object: 'program_tier', deleted: true });
    await settled(t, { token } as never, removed.body.operation.id);
    expect(await tierOf(api, low.id)).toBeNull();

    // A measurement moves the tier at once, in its own transaction (trigger metric).
    expectStatus(await api.measure([{ entity: low.entity, metric: 'sales', value: 95, occurred_at: ago(500) }]), 201);
    expect(expectStatus(await api.enrollment(low.id), 200)).toMatchObject({
      tier: { name: 'Silver', value: 105 },
      evaluation: { trigger: 'metric' },
    });
  });

  test('changes made while a retier runs answer it, and it applies the last ladder to everyone', async () => {
    const { api, token } = await setup(t, SCOPES);
    const program = expectStatus(await api.createProgram({ name: 'Busy' }), 201);
    const members = [];
    for (let i = 0; i < 5; i++) members.push(await enrolled(api, program.id, `busy-${i}`, 50));
    const post = (body: unknown) => t.http.post(`/v1/platform/programs/${program.id}/tiers`, body, { token });
    const [a, b] = await Promise.all([
      post({ name: 'A', metric: 'sales', threshold: 10, rate_bps: 1 }),
      post({ name: 'B', metric: 'sales', threshold: 40, rate_bps: 2 }),
    ]);
    expect([a.status, b.status]).toEqual([202, 202]);
    const ops = new Set([a.body.operation.id, b.body.operation.id]);
    for (const id of ops) expect((await settled(t, { token } as never, id)).status).toBe('succeeded');
    expect(await Promise.all(members.map((m) => tierOf(api, m.id)))).toEqual(['B', 'B', 'B', 'B', 'B']);
  });

  test('bad input is 400 naming the field, a duplicate rung is 409, other programs and tiers are 404; nothing changes', async () => {
    const { api, token } = await setup(t, SCOPES);
    const program = expectStatus(await api.createProgram({ name: 'Strict' }), 201);
    const post = (path: string, body?: unknown) => t.http.post(`/v1/platform/programs/${program.id}${path}`, body, { token });
    const good = { name: 'T', metric: 'sales', threshold: 10, rate_bps: 100 };
    expectPlatformError(await post('/tiers', { ...good, metric: 'metric:sales' }), 400, 'invalid_request', 'metric');
    expectPlatformError(await post('/tiers', { ...good, threshold: -1 }), 400, 'invalid_request', 'threshold');
    expectPlatformError(await post('/tiers', { ...good, rate_bps: 1.5 }), 400, 'invalid_request', 'rate_bps');
    expectPlatformError(await post('/tiers', { ...good, rate_bps: '100' }), 400, 'invalid_request', 'rate_bps');
    expectPlatformError(await post('/tiers', { ...good, name: 'a\u0000b' }), 400, 'invalid_request', 'name');
    expectPlatformError(await post('/tiers', { ...good, colour: 'red' }), 400, 'invalid_request', 'colour');
    const first = expectStatus(await post('/tiers', good), 202);
    expectPlatformError(await post('/tiers', { ...good, name: 'Again' }), 409, 'resource_conflict', 'threshold');
    expectPlatformError(await post(`/tiers/${first.tier.id}`, {}), 400, 'invalid_request');
    expectPlatformError(await post('/tiers/tier_00000000000000000000000000000000', { name: 'X' }), 404, 'resource_missing');
    const other = await setup(t, SCOPES);
    const theirs = expectStatus(await other.api.createProgram({ name: 'Theirs' }), 201);
    expectPlatformError(await t.http.post(`/v1/platform/programs/${theirs.id}/tiers`, good, { token }), 404, 'resource_missing');
    expectPlatformError(await t.http.get(`/v1/platform/programs/${theirs.id}/tiers`, { token }), 404, 'resource_missing');
    const foreign = await t.http.post(`/v1/platform/programs/${theirs.id}/tiers/${first.tier.id}`, { name: 'X' }, { token: other.token });
    expectPlatformError(foreign, 404, 'resource_missing');
    const ladder = expectStatus(await t.http.get(`/v1/platform/programs/${program.id}/tiers`, { token }), 200);
    expect(ladder.data).toEqual([first.tier]);
  });
});
