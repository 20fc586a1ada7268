import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '../../src/db/database.ts';
import type { Reader } from '../../src/domain/action/action.ts';
import { newId } from '../../src/domain/id.ts';
import { ledgerInvariant } from '../../src/domain/payout/ledger.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../support/database.ts';
import { HttpClient } from '../support/http.ts';
import { crashWorkerEnv, spawnServer, until, type ServerProcess } from '../support/ops-process.ts';
import { buildTenant, type Server } from '../support/kit.ts';

/**
 * kill -9 during a payout run (PostgreSQL: the test seeds the ledger and checks the invariant through its own
 * connection beside the servers). The first process is killed while the run pays, mid-batch; the second resumes it
 * through the expired lease: every payout is settled exactly once (one payout.settled and one spend each), none is
 * lost, and the ledger invariant holds.
 */
let database: TestDatabase;
let db: pg.Client;
const running: ServerProcess[] = [];
const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
const LEASE_MS = 1500;
const ENTITIES = 12;

beforeAll(async () => {
  if (!onPostgres()) return;
  database = await createTestDatabase();
  db = new pg.Client({ connectionString: database.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop('SIGKILL');
  await db?.end();
  await database?.drop();
});

async function server(): Promise<{ proc: ServerProcess; t: Server }> {
  const proc = await spawnServer({
    ...crashWorkerEnv(operatorToken, LEASE_MS),
    PAYOUT_BATCH: '3',
    PAYOUT_SANDBOX_DELAY_MS: '400',
    DATABASE_URL: database.databaseUrl!,
  });
  running.push(proc);
  return { proc, t: { http: new HttpClient(proc.origin), operatorToken } };
}

/** The invariant's SQL on this test's own connection. */
const reader = {
  $queryRaw: async (strings: TemplateStringsArray, ...values: unknown[]) => {
    const sql = Prisma.sql(strings, ...values);
    return (await db.query(sql.text, sql.values as unknown[])).rows;
  },
} as unknown as Reader;

describe.skipIf(!onPostgres())('kill -9 during a payout run', () => {
  it('the run resumes on another process: no payout paid twice, none lost, the ledger invariant holds', { timeout: 180_000 }, async () => {
    const a = await server();
    const { org, token } = await buildTenant(a.t, ['payouts:read', 'payouts:write', 'events:read']);
    const brand = org.brands[0]!.id;
    // The ledger, seeded directly: one entry of 10 × (i + 1) per entity for yesterday.
    const day = 86_400_000;
    const end = new Date(Math.floor(Date.now() / day) * day);
    const start = new Date(end.getTime() - day);
    let total = 0;
    for (let i = 0; i < ENTITIES; i++) {
      const entity = newId('entity');
      await db.query('INSERT INTO entity (id, organization_id, external_user_id, issuer) VALUES ($1, $2, $3, $4)', [
        entity,
        org.id,
        `crash-${i}`,
        'https://idp.example',
      ]);
      const amount = 10 * (i + 1);
      total += amount;
      await db.query(
        `INSERT INTO ledger_entry (id, organization_id, brand_id, program_id, enrollment_id, entity_id, kind, period_start, period_end,
           source_period_start, qualified, value, rate_bps, earned, carry, amount)
         VALUES ($1, $2, $3, 'prog_seed', $4, $5, 'accrual', $6, $7, $6, true, $8::numeric, 10000, $8::numeric, 0, $8::bigint)`,
        [newId('ledgerEntry'), org.id, brand, newId('enrollment'), entity, start, end, amount],
      );
    }
    const top = await a.t.http.post(`/operator/brands/${brand}/wallet/top_up`, { amount: total }, { token: operatorToken });
    expect(top.status, top.text).toBe(200);
    const res = await a.t.http.post(
      '/v1/platform/payouts/runs',
      { period_end: new Date().toISOString() },
      {
        token,
        headers: { 'idempotency-key': randomUUID() },
      },
    );
    expect(res.status, res.text).toBe(202);
    const runId = res.body.operation.id;
    // Killed once some payouts settled and others are still to pay (a batch of 3 takes ~1.2 s).
    await until('the run to be paying', 30_000, async () => {
      const { rows } = await db.query("SELECT count(*)::int AS n FROM payout WHERE operation_id = $1 AND status = 'settled'", [runId]);
      return rows[0].n >= 1 && rows[0].n < ENTITIES ? true : undefined;
    });
    await a.proc.stop('SIGKILL');

    const b = await server();
    const done = await until('the run to settle on the second process', 90_000, async () => {
      const r = await b.t.http.get(`/v1/platform/operations/${runId}`, { token });
      return ['succeeded', 'partial', 'failed', 'canceled'].includes(r.body.operation?.status) ? r.body.operation : undefined;
    });
    expect(done).toMatchObject({
      status: 'succeeded',
      result: { payouts: ENTITIES, settled: ENTITIES, amount: total, amount_settled: total },
    });
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    const { rows: payouts } = await db.query('SELECT id, status FROM payout WHERE operation_id = $1', [runId]);
    expect(payouts).toHaveLength(ENTITIES);
    expect(payouts.every((p) => p.status === 'settled')).toBe(true);
    const { rows: settledEvents } = await db.query(
      "SELECT subject_id, count(*)::int AS n FROM event WHERE type = 'payout.settled' AND operation_id = $1 GROUP BY subject_id",
      [runId],
    );
    expect(settledEvents).toHaveLength(ENTITIES);
    expect(settledEvents.every((e) => e.n === 1)).toBe(true);
    const { rows: moves } = await db.query(
      'SELECT kind, count(*)::int AS n, sum(amount)::int AS amount FROM wallet_movement WHERE operation_id = $1 GROUP BY kind ORDER BY kind',
      [runId],
    );
    expect(moves).toEqual([
      { kind: 'reserve', n: 1, amount: total },
      { kind: 'spend', n: ENTITIES, amount: total },
    ]);
    const inv = await ledgerInvariant(reader, org.id);
    expect(inv).toMatchObject({ ok: true, ledger: BigInt(total), settled: BigInt(total), in_flight: 0n, unpaid: 0n });
    await b.proc.stop('SIGTERM');
  });
});
