import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { expectStatus } from '../assertion/helpers.ts';
import { settled, topUp } from '../operation/helpers.ts';
import { appTest, expectPlatformError, type TestApp } from '../support/kit.ts';
import { activeIn, expectInvariant, nextDay, paidProgram, payoutTenant } from './helpers.ts';

/** Reversals by compensating entries (ADR 0009): never an UPDATE or DELETE of the ledger. */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => {
  t = app;
});

type Who = Awaited<ReturnType<typeof payoutTenant>>;
const now = () => t.clock.now().toISOString();

/** Entities a and b earning 10 and 20 in one closed day (rate 10 %). */
async function earned(who: Who) {
  const program = await paidProgram(t, who.api, who.token, 1000);
  const es = [await activeIn(who.api, program.id, 'a'), await activeIn(who.api, program.id, 'b')];
  expectStatus(
    await who.api.measure(es.map((e, i) => ({ entity: e.entity, metric: 'sales', value: 100 * (i + 1), occurred_at: now() }))),
    201,
  );
  const day = now();
  await nextDay(t);
  const entries = expectStatus(await who.ledger(), 200).data as any[];
  const of = (i: number) => entries.find((x) => x.entity === es[i]!.entity)!;
  return { program, es, day, a: of(0), b: of(1) };
}

const reverse = (who: Who, id: string, body: unknown = { reason: 'chargeback' }, key = randomUUID()) =>
  t.http.post(`/v1/platform/payouts/ledger/${id}/reverse`, body, { token: who.token, headers: { 'idempotency-key': key } });

const runAndSettle = async (who: Who) => {
  const res = await who.run({ period_end: now() });
  expect(res.status, res.text).toBe(202);
  return settled(t, { token: who.token } as never, res.body.id);
};

describe('reversals', () => {
  test("an unpaid entry's reversal sits beside it and nets it out of the next run", async () => {
    const who = await payoutTenant(t);
    const { es, a } = await earned(who);
    const key = randomUUID();
    const res = await reverse(who, a.id, { reason: 'duplicate sale' }, key);
    expect(res.status, res.text).toBe(201);
    const reversal = res.body.ledger_entry;
    expect(reversal).toMatchObject({
      object: 'ledger_entry',
      id: expect.stringMatching(/^le_[0-9a-f]{32}$/),
      kind: 'reversal',
      reverses: a.id,
      reason: 'duplicate sale',
      amount: -10,
      earned: '-10',
      carry: a.carry,
      entity: a.entity,
      enrollment: a.enrollment,
      period_start: a.period_start,
      source_period_start: a.source_period_start,
      status: 'unpaid',
    });
    // The same key answers the same reversal.
    const again = await reverse(who, a.id, { reason: 'duplicate sale' }, key);
    expect(again.status).toBe(201);
    expect(again.body.ledger_entry.id).toBe(reversal.id);
    await topUp(t, who.brand, 100);
    const op = await runAndSettle(who);
    // a nets to 0: nothing is paid for it (a payout never goes negative or zero); b is paid.
    expect(op).toMatchObject({ status: 'succeeded', result: { payouts: 1, amount: 20 } });
    const payouts = expectStatus(await who.payouts(), 200).data;
    expect(payouts.map((p: any) => p.entity)).toEqual([es[1]!.entity]);
    expect(
      expectStatus(await who.ledger({ entity: a.entity, status: 'unpaid' }), 200)
        .data.map((x: any) => x.amount)
        .sort(),
    ).toEqual([-10, 10]);
    await expectInvariant(t, who.org.id);
  });

  test("a paid entry's reversal is a clawback from the next payout; a net ≤ 0 is carried, not paid", async () => {
    const who = await payoutTenant(t);
    const { es, a } = await earned(who);
    await topUp(t, who.brand, 1000);
    expect((await runAndSettle(who)).result).toMatchObject({ payouts: 2, amount: 30 });
    const res = await reverse(who, a.id);
    expect(res.status, res.text).toBe(201);
    // The paid period is closed to it: the clawback is payable in the first period with nothing paid, today.
    expect(res.body.ledger_entry).toMatchObject({ amount: -10, status: 'unpaid', period_start: a.period_end });
    // Today a earns 5: net -5, carried; b earns 10.
    expectStatus(
      await who.api.measure([
        { entity: es[0]!.entity, metric: 'sales', value: 50, occurred_at: now() },
        { entity: es[1]!.entity, metric: 'sales', value: 100, occurred_at: now() },
      ]),
      201,
    );
    await nextDay(t);
    expect((await runAndSettle(who)).result).toMatchObject({ payouts: 1, amount: 10 });
    expect(
      expectStatus(await who.ledger({ entity: a.entity, status: 'unpaid' }), 200)
        .data.map((x: any) => x.amount)
        .sort(),
    ).toEqual([-10, 5]);
    await expectInvariant(t, who.org.id);
    // The next day a earns 30: the run pays 30 + 5 − 10 = 25, the clawback with it.
    expectStatus(await who.api.measure([{ entity: es[0]!.entity, metric: 'sales', value: 300, occurred_at: now() }]), 201);
    await nextDay(t);
    expect((await runAndSettle(who)).result).toMatchObject({ payouts: 1, amount: 25 });
    const [paid] = expectStatus(await who.payouts({ entity: a.entity, limit: 1 }), 200).data;
    expect(paid).toMatchObject({ amount: 25, status: 'settled' });
    expect(paid.entries).toContain(res.body.ledger_entry.id);
    await expectInvariant(t, who.org.id);
  });

  test("an unpaid entry's reversal stays in its period when other entities' entries of that period are paid", async () => {
    const who = await payoutTenant(t);
    const { es, a, b } = await earned(who);
    await topUp(t, who.brand, 100);
    t.app.deps.config.payouts = { sandbox: { failEntities: [es[0]!.entity] } };
    try {
      expect((await runAndSettle(who)).result).toMatchObject({ settled: 1, failed: 1 });
    } finally {
      t.app.deps.config.payouts = undefined;
    }
    const res = await reverse(who, a.id);
    expect(res.status, res.text).toBe(201);
    expect(res.body.ledger_entry).toMatchObject({ amount: -10, status: 'unpaid', period_start: a.period_start });
    // b's, paid, is clawed back in the next period.
    expect((await reverse(who, b.id)).body.ledger_entry).toMatchObject({ amount: -20, status: 'unpaid', period_start: b.period_end });
    await expectInvariant(t, who.org.id);
  });

  test('a late measurement after a reversal adjusts by the change only: the reversal stays', async () => {
    const who = await payoutTenant(t);
    const { es, day, a } = await earned(who);
    expect((await reverse(who, a.id)).status).toBe(201);
    expectStatus(await who.api.measure([{ entity: es[0]!.entity, metric: 'sales', value: 50, occurred_at: day }]), 201);
    const entries = expectStatus(await who.ledger({ entity: a.entity }), 200).data.reverse();
    expect(entries.map((x: any) => [x.kind, x.amount])).toEqual([
      ['accrual', 10],
      ['reversal', -10],
      ['adjustment', 5],
    ]);
    await expectInvariant(t, who.org.id);
  });

  test('an entry is reversed once, a reversal is final (409); bad input 400; unknown or another organization’s 404; scope', async () => {
    const who = await payoutTenant(t);
    const { a, b } = await earned(who);
    const first = await reverse(who, a.id);
    expect(first.status, first.text).toBe(201);
    expectPlatformError(await reverse(who, a.id), 409, 'resource_conflict');
    expectPlatformError(await reverse(who, first.body.ledger_entry.id), 409, 'resource_conflict');
    expectPlatformError(await reverse(who, b.id, {}), 400, 'invalid_request', 'reason');
    expectPlatformError(await reverse(who, b.id, { reason: '  ' }), 400, 'invalid_request', 'reason');
    expectPlatformError(await reverse(who, b.id, { reason: 'x', amount: 3 }), 400, 'invalid_request', 'amount');
    expectPlatformError(await reverse(who, 'le_nope'), 404, 'resource_missing');
    const other = await payoutTenant(t);
    expectPlatformError(await reverse(other, b.id), 404, 'resource_missing');
    const reader = await payoutTenant(t, ['payouts:read']);
    expectPlatformError(await reverse(reader, b.id), 403, 'missing_scope');
    // Nothing of b changed; the ledger only grew by the one reversal.
    expect(expectStatus(await who.ledger(), 200).data).toHaveLength(3);
    await expectInvariant(t, who.org.id);
  });
});
