import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { PUBLIC_EVENT_TYPES } from '../../src/domain/event/types.ts';
import { expectStatus } from '../assertion/helpers.ts';
import { settled, topUp } from '../operation/helpers.ts';
import { appTest, expectPlatformError, type TestApp } from '../support/kit.ts';
import { activeIn, expectInvariant, nextDay, operationWhen, paidProgram, payoutTenant } from './helpers.ts';
import { operationById } from '../../src/domain/operation/store.ts';
import { updateOperationRow } from '../support/db-access.ts';

const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => {
  t = app;
  t.app.deps.config.payouts = { batch: 2 };
});

type Who = Awaited<ReturnType<typeof payoutTenant>>;
const now = () => t.clock.now().toISOString();

/** Three entities earning 10, 20 and 30 in one closed day, and that day's end. */
async function earned(who: Who) {
  const program = await paidProgram(t, who.api, who.token, 1000);
  const es = [await activeIn(who.api, program.id, 'a'), await activeIn(who.api, program.id, 'b'), await activeIn(who.api, program.id, 'c')];
  expectStatus(
    await who.api.measure(es.map((e, i) => ({ entity: e.entity, metric: 'sales', value: 100 * (i + 1), occurred_at: now() }))),
    201,
  );
  await nextDay(t);
  return { program, es, periodEnd: now() };
}

const feed = async (who: Who, type: string) => (await who.api.events(type)).map((e: any) => e);

describe('payout runs', () => {
  test('a run reserves the total, pays one payout per entity, events carry the operation, the ledger shows them paid', async () => {
    const who = await payoutTenant(t);
    const { program, es, periodEnd } = await earned(who);
    await topUp(t, who.brand, 100);
    const res = await who.run({ program: program.id, period_end: periodEnd }, randomUUID());
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ object: 'operation', kind: 'payout.run', subject: { type: 'payouts', id: program.id } });
    const op = await settled(t, { token: who.token } as never, res.body.id);
    expect(op).toMatchObject({ status: 'succeeded', result: { payouts: 3, amount: 60, settled: 3, failed: 0, amount_settled: 60 } });
    const list = expectStatus(await who.payouts(), 200);
    expect(list.data.map((p: any) => [p.entity, p.amount, p.status]).sort()).toEqual(
      es.map((e, i) => [e.entity, 10 * (i + 1), 'settled']).sort(),
    );
    const one = expectStatus(await who.payout(list.data[0].id), 200);
    expect(one).toMatchObject({
      object: 'payout',
      id: expect.stringMatching(/^po_[0-9a-f]{32}$/),
      operation: res.body.id,
      entries: [expect.stringMatching(/^le_/)],
    });
    expect(expectStatus(await who.ledger({ status: 'paid' }), 200).data).toHaveLength(3);
    expect(expectStatus(await who.ledger({ status: 'unpaid' }), 200).data).toHaveLength(0);
    const created = await feed(who, 'payout.created');
    const settledEvents = await feed(who, 'payout.settled');
    expect(created).toHaveLength(3);
    expect(settledEvents).toHaveLength(3);
    for (const e of [...created, ...settledEvents]) expect(e.operation).toBe(res.body.id);
    const wallet = await t.http.get(`/operator/brands/${who.brand}/wallet`, { token: t.operatorToken });
    expect(wallet.body.balance).toBe(40);
    // The same (brand, program, period_end): the same operation, whatever the key.
    const again = await who.run({ program: program.id, period_end: periodEnd }, randomUUID());
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(res.body.id);
    await expectInvariant(t, who.org.id);
  });

  test('a late measurement for a paid period adjusts into the next unpaid period', async () => {
    const who = await payoutTenant(t);
    const { program, es, periodEnd } = await earned(who);
    await topUp(t, who.brand, 60);
    const res = await who.run({ program: program.id, period_end: periodEnd });
    expect((await settled(t, { token: who.token } as never, res.body.id)).status).toBe('succeeded');
    const day = new Date(Date.parse(periodEnd) - 1).toISOString();
    expectStatus(await who.api.measure([{ entity: es[0]!.entity, metric: 'sales', value: 50, occurred_at: day }]), 201);
    const [adjustment] = expectStatus(await who.ledger({ entity: es[0]!.entity, limit: 1 }), 200).data;
    expect(adjustment).toMatchObject({ kind: 'adjustment', amount: 5, status: 'unpaid', period_start: periodEnd });
    expect(adjustment.source_period_start < periodEnd).toBe(true);
    await expectInvariant(t, who.org.id);
  });

  test('short of funds the run waits funding_required; a top-up wakes it', async () => {
    const who = await payoutTenant(t);
    const { periodEnd } = await earned(who);
    await topUp(t, who.brand, 10);
    const res = await who.run({ period_end: periodEnd });
    expect(res.status, res.text).toBe(202);
    const waiting = await operationWhen(t, who.token, res.body.id, (o) => o.status === 'waiting');
    expect(waiting).toMatchObject({
      status: 'waiting',
      waiting_reason: 'funding_required',
      progress: { required: 60, wallet_balance: 10 },
    });
    await expectInvariant(t, who.org.id);
    await topUp(t, who.brand, 50);
    const op = await settled(t, { token: who.token } as never, res.body.id);
    expect(op).toMatchObject({ status: 'succeeded', result: { payouts: 3, amount: 60 } });
    await expectInvariant(t, who.org.id);
  });

  test('a failed payout returns its entries to unpaid and its hold to the wallet; the next run pays them', async () => {
    const who = await payoutTenant(t);
    const { es, periodEnd } = await earned(who);
    await topUp(t, who.brand, 60);
    t.app.deps.config.payouts = { batch: 2, sandbox: { failEntities: [es[1]!.entity] } };
    try {
      const res = await who.run({ period_end: periodEnd });
      const op = await settled(t, { token: who.token } as never, res.body.id);
      expect(op).toMatchObject({
        status: 'partial',
        error: { code: 'some_payouts_failed' },
        result: { settled: 2, failed: 1, amount_failed: 20 },
      });
      // Every payout.* type of the public vocabulary is produced by a real route.
      const produced = new Set((await who.api.events()).map((e: any) => e.type));
      const vocabulary = PUBLIC_EVENT_TYPES.filter((type) => type.startsWith('payout.'));
      expect(vocabulary).toHaveLength(3);
      for (const type of vocabulary) expect(produced.has(type), type).toBe(true);
      const failed = await feed(who, 'payout.failed');
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({
        operation: res.body.id,
        data: { object: { entity: es[1]!.entity, status: 'failed', amount: 20 } },
      });
      expect(expectStatus(await who.ledger({ status: 'unpaid' }), 200).data.map((x: any) => [x.entity, x.amount])).toEqual([
        [es[1]!.entity, 20],
      ]);
      const wallet = await t.http.get(`/operator/brands/${who.brand}/wallet`, { token: t.operatorToken });
      expect(wallet.body.balance).toBe(20);
      await expectInvariant(t, who.org.id);
    } finally {
      t.app.deps.config.payouts = { batch: 2 };
    }
    await nextDay(t);
    const next = await who.run({ period_end: now() });
    const op = await settled(t, { token: who.token } as never, next.body.id);
    expect(op).toMatchObject({ status: 'succeeded', result: { payouts: 1, amount: 20 } });
    // What stays unpaid: the new day's zero entries of the entities with nothing else to pay (b's rode with its 20).
    expect(expectStatus(await who.ledger({ status: 'unpaid' }), 200).data.map((x: any) => x.amount)).toEqual([0, 0]);
    await expectInvariant(t, who.org.id);
  });

  test('one live run per program (409 operation_conflict); bad input 400; unknown 404', async () => {
    const who = await payoutTenant(t);
    const { program, periodEnd } = await earned(who);
    const first = await who.run({ program: program.id, period_end: periodEnd });
    expect(first.status).toBe(202);
    const other = await who.run({ program: program.id, period_end: new Date(Date.parse(periodEnd) - 1000).toISOString() });
    expectPlatformError(other, 409, 'operation_conflict');
    expectPlatformError(
      await who.run({ period_end: new Date(t.clock.now().getTime() + 1000).toISOString() }),
      400,
      'invalid_request',
      'period_end',
    );
    expectPlatformError(await who.run({ period_end: 'soon' }), 400, 'invalid_request', 'period_end');
    expectPlatformError(await who.run({ program: 'prog_nope', period_end: periodEnd }), 404, 'resource_missing', 'program');
    expectPlatformError(await who.payout('po_nope'), 404, 'resource_missing');
    expectPlatformError(await who.payouts({ status: 'lost' }), 400, 'invalid_request', 'status');
    await topUp(t, who.brand, 60);
    await settled(t, { token: who.token } as never, first.body.id);
  });

  test('cancel on the control plane: what is paid stays paid, the rest fails and is released', async () => {
    const who = await payoutTenant(t);
    const { periodEnd } = await earned(who);
    await topUp(t, who.brand, 5);
    const res = await who.run({ period_end: periodEnd });
    await operationWhen(t, who.token, res.body.id, (o) => o.status === 'waiting');
    const cancel = await t.http.post(`/v1/platform/payouts/runs/${res.body.id}/cancel`, undefined, { token: who.token });
    expect(cancel.status, cancel.text).toBe(202);
    expect(cancel.body.operation).toMatchObject({ kind: 'payout.run_cancel', target_operation_id: res.body.id });
    const c = await settled(t, { token: who.token } as never, cancel.body.operation.id);
    expect(c.status).toBe('succeeded');
    const op = expectStatus(await t.http.get(`/v1/platform/operations/${res.body.id}`, { token: who.token }), 200).operation;
    expect(op).toMatchObject({ status: 'canceled', result: { settled: 0, failed: 0 } });
    expect(expectStatus(await who.ledger({ status: 'unpaid' }), 200).data).toHaveLength(3);
    const wallet = await t.http.get(`/operator/brands/${who.brand}/wallet`, { token: t.operatorToken });
    expect(wallet.body.balance).toBe(5);
    expectPlatformError(
      await t.http.post(`/v1/platform/payouts/runs/${res.body.id}/cancel`, undefined, { token: who.token }),
      409,
      'resource_conflict',
    );
    await expectInvariant(t, who.org.id);
  });
});

describe('the provider holds payouts for review', () => {
  const REVIEW_MS = 60_000;
  /** Moves the clock past the provider's review and wakes the worker (the waiting run is due at the decision time). */
  const decide = () => {
    t.clock.advance(REVIEW_MS);
    t.app.operations.kick();
  };
  test.afterEach(() => {
    t.app.deps.config.payouts = { batch: 2 };
  });
  /** Three entities earning 10, 20, 30, every payout held for review and decided `outcome`: the run, waiting. */
  const heldRun = async (outcome: 'succeed' | 'fail') => {
    const who = await payoutTenant(t);
    const { periodEnd } = await earned(who);
    await topUp(t, who.brand, 60);
    t.app.deps.config.payouts = { batch: 2, sandbox: { outcome: 'review', review: { afterMs: REVIEW_MS, outcome } } };
    const res = await who.run({ period_end: periodEnd });
    return { who, res, waiting: await operationWhen(t, who.token, res.body.id, (o) => o.status === 'waiting') };
  };
  const wallet = async (who: Who) => (await t.http.get(`/operator/brands/${who.brand}/wallet`, { token: t.operatorToken })).body.balance;

  test('a held payout is in_review and in flight; the run waits provider_review until the decision settles it', async () => {
    const who = await payoutTenant(t);
    const { es, periodEnd } = await earned(who);
    await topUp(t, who.brand, 60);
    t.app.deps.config.payouts = { batch: 2, sandbox: { reviewEntities: [es[1]!.entity], review: { afterMs: REVIEW_MS } } };
    const res = await who.run({ period_end: periodEnd });
    const waiting = await operationWhen(t, who.token, res.body.id, (o) => o.status === 'waiting');
    expect(waiting).toMatchObject({ waiting_reason: 'provider_review', progress: { in_review: 1, settled: 2, failed: 0 } });
    const held = expectStatus(await who.payouts({ status: 'in_review' }), 200).data;
    expect(held.map((p: any) => [p.entity, p.amount, p.failure_reason])).toEqual([[es[1]!.entity, 20, null]]);
    expect(expectStatus(await who.ledger({ status: 'in_flight' }), 200).data.map((x: any) => x.entity)).toEqual([es[1]!.entity]);
    // No event for the review: the payout's payout.created went out; settled or failed comes with the decision.
    expect(await feed(who, 'payout.settled')).toHaveLength(2);
    expect(await wallet(who)).toBe(0);
    const inv = await expectInvariant(t, who.org.id);
    expect(inv.in_flight).toBe(20n);
    // Not yet decided: woken before the decision, the run asks the provider again and goes back to waiting.
    t.clock.advance(REVIEW_MS / 2);
    await updateOperationRow(t, res.body.id, { runAfter: t.clock.now() });
    expect(await t.app.operations.drain()).toBe(1);
    expect((await operationWhen(t, who.token, res.body.id, () => true)).waiting_reason).toBe('provider_review');
    t.clock.advance(REVIEW_MS / 2);
    t.app.operations.kick();
    const op = await settled(t, { token: who.token } as never, res.body.id);
    expect(op).toMatchObject({ status: 'succeeded', progress: { in_review: 0 }, result: { payouts: 3, settled: 3, amount_settled: 60 } });
    const after = expectStatus(await who.payout(held[0].id), 200);
    expect(after).toMatchObject({ status: 'settled', operation: res.body.id });
    const settledEvents = await feed(who, 'payout.settled');
    expect(settledEvents.filter((e: any) => e.subject.id === held[0].id)).toHaveLength(1);
    expect(expectStatus(await who.ledger({ status: 'paid' }), 200).data).toHaveLength(3);
    expect(await wallet(who)).toBe(0);
    await expectInvariant(t, who.org.id);
  });

  test('a review that ends in a refusal fails the payout: its hold returns, its entries are unpaid again', async () => {
    const { who, res, waiting } = await heldRun('fail');
    expect(waiting.progress.in_review).toBe(3);
    expect((await expectInvariant(t, who.org.id)).in_flight).toBe(60n);
    decide();
    const op = await settled(t, { token: who.token } as never, res.body.id);
    expect(op).toMatchObject({ status: 'failed', error: { code: 'payouts_failed' }, result: { failed: 3, amount_failed: 60 } });
    const failed = await feed(who, 'payout.failed');
    expect(failed).toHaveLength(3);
    expect(failed[0].data.object).toMatchObject({ status: 'failed', failure_reason: expect.stringContaining('after review') });
    expect(expectStatus(await who.ledger({ status: 'unpaid' }), 200).data).toHaveLength(3);
    expect(await wallet(who)).toBe(60);
    await expectInvariant(t, who.org.id);
  });

  test('cancel while payouts are in review: the run cannot take them back; they settle on their own, then it is canceled', async () => {
    const { who, res } = await heldRun('succeed');
    const cancel = await t.http.post(`/v1/platform/payouts/runs/${res.body.id}/cancel`, undefined, { token: who.token });
    expect(cancel.status, cancel.text).toBe(202);
    // The cancel ran (the run, woken by it, is parked again until the decision) and found only held payouts: the
    // run still waits on the provider, the cancel on the run.
    const row = () => operationById(t.app.deps.db.prisma, res.body.id);
    for (const deadline = Date.now() + 20_000; ; ) {
      const r = await row();
      if (r.cancelRequestedBy && !r.leaseOwner && r.runAfter > t.clock.now()) break;
      if (Date.now() > deadline) throw new Error(`run not parked again: ${JSON.stringify(r)}`);
      await t.app.operations.nextChange(res.body.id, 1000);
    }
    const still = await operationWhen(t, who.token, res.body.id, () => true);
    expect(still).toMatchObject({ status: 'waiting', waiting_reason: 'provider_review', progress: { in_review: 3 } });
    expect((await operationWhen(t, who.token, cancel.body.operation.id, (o) => o.status === 'waiting')).waiting_reason).toBe(
      'awaiting_target_settle',
    );
    await expectInvariant(t, who.org.id);
    decide();
    const op = await settled(t, { token: who.token } as never, res.body.id);
    expect(op).toMatchObject({ status: 'canceled', result: { settled: 3, failed: 0, canceled_by: cancel.body.operation.id } });
    expect((await settled(t, { token: who.token } as never, cancel.body.operation.id)).status).toBe('succeeded');
    expect(await feed(who, 'payout.settled')).toHaveLength(3);
    await expectInvariant(t, who.org.id);
  });
});
