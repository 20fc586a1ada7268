import { describe, expect } from 'vitest';
import { PlatformClient, PlatformError } from '../../packages/client/src/index.ts';
import { newId } from '../../src/domain/id.ts';
import { cliRunner } from '../support/cli.ts';
import { onPostgres } from '../support/database.ts';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { insertProgramRow } from '../../src/domain/program/store.ts';
import { insertEntity, insertLedgerEntry } from '../support/db-access.ts';

/** The client's payout methods and `platform payouts run --wait` against the real server (the CLI in the PGlite pass only). */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
const { run } = cliRunner(() => t.origin);

const DAY = 86_400_000;

/** A tenant whose ledger holds one entry of `amounts[i]` for entity i yesterday, its wallet topped up to pay them. */
async function owed(amounts: number[]) {
  const { org, token } = await buildTenant(t, ['payouts:read', 'payouts:write', 'events:read']);
  const brand = org.brands[0]!.id;
  const end = new Date(Math.floor(t.clock.now().getTime() / DAY) * DAY);
  const start = new Date(end.getTime() - DAY);
  const now = t.clock.now();
  const program = await insertProgramRow(t.app.deps.db.prisma, {
    id: newId('program'),
    organizationId: org.id,
    brandId: brand,
    name: 'Seed',
    gracePeriodSeconds: 0,
    performanceWindow: 'day',
    createdAt: now,
    updatedAt: now,
  });
  for (const [i, amount] of amounts.entries()) {
    const entity = newId('entity');
    await insertEntity(t, { id: entity, organizationId: org.id, externalUserId: `c-${i}`, issuer: 'acme' });
    await insertLedgerEntry(t, {
      id: newId('ledgerEntry'),
      organizationId: org.id,
      brandId: brand,
      programId: program.id,
      enrollmentId: newId('enrollment'),
      entityId: entity,
      periodStart: start,
      periodEnd: end,
      value: amount,
      rateBps: 10000,
      earned: amount,
      carry: 0,
      amount,
    });
  }
  const top = await t.http.post(`/operator/brands/${brand}/wallet/top_up`, { amount: 1000 }, { token: t.operatorToken });
  expect(top.status, top.text).toBe(200);
  return { token, start, end };
}

describe('payouts through the client', () => {
  test('ledger, run and wait, list, retrieve, export', async () => {
    const { token, start } = await owed([5, 7]);
    const client = new PlatformClient({ apiKey: token, origin: t.origin });
    const ledger = await client.payouts.ledger({ status: 'unpaid' });
    expect(ledger.data.map((e) => e.amount).sort()).toEqual([5, 7]);
    expect(ledger.data[0]).toMatchObject({ object: 'ledger_entry', rateBps: 10000, sourcePeriodStart: start.toISOString() });
    const op = await client.payouts.run({ periodEnd: t.clock.now() });
    expect(op).toMatchObject({ object: 'operation', kind: 'payout.run' });
    const done = await client.operations.wait(op.id, { intervalMs: 50 });
    expect(done).toMatchObject({ status: 'succeeded', result: { payouts: 2, amount: 12 } });
    const page = await client.payouts.list({ status: 'settled' });
    expect(page.data).toHaveLength(2);
    const one = await client.payouts.retrieve(page.data[0]!.id);
    expect(one).toMatchObject({ object: 'payout', status: 'settled', operation: op.id, failureReason: null });
    expect(one.entries).toHaveLength(1);
    const csv = await client.payouts.export({ period: start });
    expect(csv.split('\r\n')).toHaveLength(1 + 2 + 1);
    // The same export as a stream, read as it arrives.
    let streamed = '';
    const decoder = new TextDecoder();
    for await (const chunk of (await client.payouts.exportStream({ period: start })) as unknown as AsyncIterable<Uint8Array>)
      streamed += decoder.decode(chunk, { stream: true });
    expect(streamed).toBe(csv);
    const badStream = await client.payouts.exportStream({ period: start, kind: 'both' as never }).catch((e) => e);
    expect(badStream).toBeInstanceOf(PlatformError);
    expect(badStream).toMatchObject({ status: 400, code: 'invalid_request', param: 'kind' });
    expect(csv.startsWith('id,entity,external_user_id,issuer,program,amount,status,')).toBe(true);
    const bad = await client.payouts.export({ period: 'soon' }).catch((e) => e);
    expect(bad).toBeInstanceOf(PlatformError);
    expect(bad).toMatchObject({ status: 400, code: 'invalid_request', param: 'period' });
    // Reversing the paid 5: a clawback, unpaid until the next run; a second reversal is a 409.
    const five = ledger.data.find((e) => e.amount === 5)!;
    const reversal = await client.payouts.reverse(five.id, { reason: 'chargeback' });
    expect(reversal).toMatchObject({ object: 'ledger_entry', kind: 'reversal', amount: -5, reverses: five.id, reason: 'chargeback' });
    expect(reversal.status).toBe('unpaid');
    const twice = await client.payouts.reverse(five.id, { reason: 'again' }).catch((e) => e);
    expect(twice).toBeInstanceOf(PlatformError);
    expect(twice).toMatchObject({ status: 409, code: 'resource_conflict' });
  });
});

describe.skipIf(onPostgres())('platform payouts ledger', () => {
  test('filters, a table or --json, --csv streams the period’s ledger export; misuse exits 2', { timeout: 120_000 }, async () => {
    const { token, start } = await owed([6, 8]);
    const env = { PLATFORM_API_KEY: token };
    const help = await run(['payouts', 'ledger', '--help']);
    expect(help.code).toBe(0);
    for (const flag of ['--entity', '--program', '--period', '--status', '--limit', '--csv']) expect(help.stdout).toContain(flag);
    const shown = await run(['payouts', 'ledger', '--status', 'unpaid'], env);
    expect(shown.code, shown.stderr).toBe(0);
    const rows = shown.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^ID\s+KIND\s+STATUS\s+AMOUNT\s+ENTITY\s+PERIOD$/);
    expect(rows.slice(1).map((r) => r.split(/\s+/).slice(1, 4))).toEqual([
      ['accrual', 'unpaid', '8'],
      ['accrual', 'unpaid', '6'],
    ]);
    const json = await run(['--json', 'payouts', 'ledger', '--period', start.toISOString(), '--limit', '1'], env);
    expect(json.code, json.stderr).toBe(0);
    const [newest] = JSON.parse(json.stdout);
    expect(newest).toMatchObject({ object: 'ledger_entry', amount: 8, periodStart: start.toISOString() });
    const mine = await run(['--json', 'payouts', 'ledger', '--entity', newest.entity], env);
    expect(JSON.parse(mine.stdout).map((e: { id: string }) => e.id)).toEqual([newest.id]);
    expect(JSON.parse((await run(['--json', 'payouts', 'ledger', '--status', 'paid'], env)).stdout)).toEqual([]);
    const csv = await run(['payouts', 'ledger', '--csv', '--period', start.toISOString()], env);
    expect(csv.code, csv.stderr).toBe(0);
    const lines = csv.stdout.split('\r\n');
    expect(lines[0]).toBe(
      'id,kind,entity,external_user_id,issuer,program,enrollment,period_start,period_end,source_period_start,tier,metric,value,rate_bps,earned,amount,carry,status,payout,reverses,created_at,reason',
    );
    expect(lines).toHaveLength(1 + 2 + 1);
    const noPeriod = await run(['payouts', 'ledger', '--csv'], env);
    expect(noPeriod.code).toBe(2);
    expect(noPeriod.stderr).toContain('--period');
    const filtered = await run(['payouts', 'ledger', '--csv', '--period', start.toISOString(), '--status', 'paid'], env);
    expect(filtered.code).toBe(2);
    expect(filtered.stderr).toContain('--status');
    const refused = await run(['payouts', 'ledger', '--status', 'lost'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('status');
  });
});

describe.skipIf(onPostgres())('platform payouts run --wait', () => {
  test('prints the run’s progress until terminal, exit 0 when it succeeded', { timeout: 120_000 }, async () => {
    const { token } = await owed([3, 4, 5]);
    const out = await run(['payouts', 'run', '--period-end', t.clock.now().toISOString(), '--wait', '--interval-ms', '100'], {
      PLATFORM_API_KEY: token,
    });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toMatch(/^op_[0-9a-f]{32} payout\.run (pending|running)/);
    expect(out.stdout.trim()).toMatch(/^op_[0-9a-f]{32} succeeded$/);
    const list = await run(['--json', 'payouts', 'list'], { PLATFORM_API_KEY: token });
    expect(list.code, list.stderr).toBe(0);
    expect(
      JSON.parse(list.stdout)
        .map((p: { amount: number }) => p.amount)
        .sort(),
    ).toEqual([3, 4, 5]);
  });
});
