import { describe, expect } from 'vitest';
import { expectStatus } from '../assertion/helpers.ts';
import { appTest, expectPlatformError, type TestApp } from '../support/kit.ts';
import { activeIn, expectInvariant, nextDay, paidProgram, payoutTenant } from './helpers.ts';
import { deleteLedgerEntry, rewriteLedgerEntry } from '../support/db-access.ts';

const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => {
  t = app;
});

/** Now: right after a period boundary, an instant even 1 ms earlier would belong to the closed period. */
const ago = (ms: number) => new Date(t.clock.now().getTime() - ms).toISOString();

describe('the payout ledger', () => {
  test('each closed period accrues value × rate_bps / 10000, rounded down, the remainder carried so totals stay exact', async () => {
    const who = await payoutTenant(t);
    const program = await paidProgram(t, who.api, who.token, 250);
    const e = await activeIn(who.api, program.id, 'carry');
    for (let day = 0; day < 5; day++) {
      expectStatus(await who.api.measure([{ entity: e.entity, metric: 'sales', value: 1001, occurred_at: ago(0) }]), 201);
      await nextDay(t);
    }
    const entries = expectStatus(await who.ledger({ entity: e.entity, limit: 100 }), 200).data.reverse();
    expect(entries).toHaveLength(5);
    // 1001 × 2.5 % = 25.025 a day: 25 each day, the carried 0.025s adding up.
    expect(entries.map((x: any) => [x.kind, x.earned, x.amount, x.carry])).toEqual([
      ['accrual', '25.025', 25, '0.025'],
      ['accrual', '25.025', 25, '0.05'],
      ['accrual', '25.025', 25, '0.075'],
      ['accrual', '25.025', 25, '0.1'],
      ['accrual', '25.025', 25, '0.125'],
    ]);
    expect(entries[0]).toMatchObject({
      object: 'ledger_entry',
      id: expect.stringMatching(/^le_[0-9a-f]{32}$/),
      entity: e.entity,
      program: program.id,
      enrollment: e.id,
      metric: 'sales',
      value: 1001,
      rate_bps: 250,
      status: 'unpaid',
      payout: null,
      tier: expect.stringMatching(/^tier_/),
    });
    // Running the scheduler again accrues nothing twice.
    await nextDay(t);
    const again = expectStatus(await who.ledger({ entity: e.entity, limit: 100 }), 200).data;
    expect(again).toHaveLength(6);
    expect(again[0]).toMatchObject({ amount: 0, earned: '0' });
    await expectInvariant(t, who.org.id);
  });

  test('a late measurement for an accrued period appends an adjustment; entries are never updated or deleted', async () => {
    const who = await payoutTenant(t);
    const program = await paidProgram(t, who.api, who.token, 1000);
    const e = await activeIn(who.api, program.id, 'late');
    expectStatus(await who.api.measure([{ entity: e.entity, metric: 'sales', value: 100, occurred_at: ago(0) }]), 201);
    const day = t.clock.now();
    await nextDay(t);
    expectStatus(await who.api.measure([{ entity: e.entity, metric: 'sales', value: 55, occurred_at: day.toISOString() }]), 201);
    const entries = expectStatus(await who.ledger({ entity: e.entity }), 200).data.reverse();
    expect(entries.map((x: any) => [x.kind, x.earned, x.amount, x.carry])).toEqual([
      ['accrual', '10', 10, '0'],
      ['adjustment', '5.5', 5, '0.5'],
    ]);
    expect(entries[1].source_period_start).toBe(entries[0].source_period_start);
    await expect(rewriteLedgerEntry(t, entries[0].id)).rejects.toThrow(/append-only/);
    await expect(deleteLedgerEntry(t, entries[0].id)).rejects.toThrow(/append-only/);
    expect(expectStatus(await who.ledger({ entity: e.entity }), 200).data).toHaveLength(2);
    await expectInvariant(t, who.org.id);
  });

  test('filters: entity, program, period, status; bad input is 400, unknown ids 404', async () => {
    const who = await payoutTenant(t);
    const program = await paidProgram(t, who.api, who.token, 100);
    const other = await paidProgram(t, who.api, who.token, 100);
    const a = await activeIn(who.api, program.id, 'fa');
    await activeIn(who.api, other.id, 'fb');
    expectStatus(await who.api.measure([{ entity: a.entity, metric: 'sales', value: 300, occurred_at: ago(0) }]), 201);
    const closed = ago(0);
    await nextDay(t);
    expect(expectStatus(await who.ledger({ program: program.id }), 200).data).toHaveLength(1);
    expect(expectStatus(await who.ledger({ period: closed }), 200).data).toHaveLength(2);
    expect(expectStatus(await who.ledger({ period: t.clock.now().toISOString() }), 200).data).toHaveLength(0);
    expect(expectStatus(await who.ledger({ status: 'unpaid', entity: a.entity }), 200).data).toHaveLength(1);
    expect(expectStatus(await who.ledger({ status: 'paid' }), 200).data).toHaveLength(0);
    const page = expectStatus(await who.ledger({ limit: 1 }), 200);
    expect(page.has_more).toBe(true);
    const next = expectStatus(await who.ledger({ limit: 1, starting_after: page.data[0].id }), 200);
    expect(next.data[0].id < page.data[0].id).toBe(true);
    expectPlatformError(await who.ledger({ status: 'gone' }), 400, 'invalid_request', 'status');
    expectPlatformError(await who.ledger({ period: 'yesterday' }), 400, 'invalid_request', 'period');
    expectPlatformError(await who.ledger({ entity: 'ent_nope' }), 404, 'resource_missing', 'entity');
    expectPlatformError(await who.ledger({ program: 'prog_nope' }), 404, 'resource_missing', 'program');
    const reader = await payoutTenant(t, ['events:read']);
    expectPlatformError(await reader.ledger(), 403, 'missing_scope');
  });
});
