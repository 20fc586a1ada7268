/**
 * A payout run over N entities (issue #17): the ledger is seeded directly in SQL (one entry per entity for
 * yesterday, 1..1000 minor units), the wallet topped up, then POST /v1/platform/payouts/runs and the run
 * followed until terminal. Reports launch → terminal, the reserve step (grouping, the reservation, N payouts,
 * their links and N payout.created events in one transaction) and payouts settled per second.
 *
 *   node --import tsx bench/payouts.ts --db pglite --entities 10000
 *   node --import tsx bench/payouts.ts --db postgres://…/bench_payouts --entities 10000
 *
 * Prints one JSON line.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { ledgerInvariant } from '../src/domain/payout/ledger.ts';
import { BENCH_OPERATOR, benchEnv, benchTenant } from './tenant.ts';

const args = process.argv.slice(2);
const flag = (name: string, def: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1]! : def;
};
const db = flag('--db', 'pglite');
const entities = Number(flag('--entities', '10000'));

const dataDir = db === 'pglite' ? mkdtempSync(join(os.tmpdir(), 'bench-payouts-')) : 'memory://';
const app = await buildApp(loadConfig(benchEnv(dataDir, db === 'pglite' ? '' : db)));
await app.start();
const origin = app.urls.api_origin;
const { created, secret, post } = await benchTenant(origin, BENCH_OPERATOR, ['payouts:read', 'payouts:write']);
const orgId = created.organization.id as string;
const brand =
  created.organization.brands?.[0]?.id ?? (await app.deps.db.prisma.brand.findFirstOrThrow({ where: { organizationId: orgId } })).id;
const prisma = app.deps.db.prisma;

const DAY = 86_400_000;
const end = new Date(Math.floor(Date.now() / DAY) * DAY);
const start = new Date(end.getTime() - DAY);
const seeded = performance.now();
await prisma.$executeRaw`
  INSERT INTO entity (id, organization_id, external_user_id, issuer)
  SELECT 'ent_' || lpad(to_hex(g), 32, '0'), ${orgId}, 'bench-' || g, 'bench' FROM generate_series(1, ${entities}::int) g`;
await prisma.$executeRaw`
  INSERT INTO ledger_entry (id, organization_id, brand_id, program_id, enrollment_id, entity_id, kind, period_start, period_end,
    source_period_start, qualified, value, rate_bps, earned, carry, amount)
  SELECT 'le_' || lpad(to_hex(g), 32, '0'), ${orgId}, ${brand}, 'prog_bench', 'enr_' || lpad(to_hex(g), 32, '0'),
         'ent_' || lpad(to_hex(g), 32, '0'), 'accrual', ${start}::timestamptz, ${end}::timestamptz, ${start}::timestamptz, true,
         1 + g % 1000, 10000, 1 + g % 1000, 0, 1 + g % 1000
    FROM generate_series(1, ${entities}::int) g`;
const seedMs = performance.now() - seeded;
await post(`/operator/brands/${brand}/wallet/top_up`, { amount: 1_000_000_000 }, BENCH_OPERATOR);

const t0 = performance.now();
const res = await fetch(`${origin}/v1/platform/payouts/runs`, {
  method: 'POST',
  headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
  body: JSON.stringify({ period_end: new Date().toISOString() }),
});
const accepted = performance.now() - t0;
const opId = ((await res.json()) as { operation: { id: string } }).operation.id;
let reservedMs: number | null = null;
let op: { status: string; result: Record<string, number>; progress: Record<string, unknown> };
for (;;) {
  const r = await fetch(`${origin}/v1/platform/operations/${opId}`, { headers: { authorization: `Bearer ${secret}` } });
  op = ((await r.json()) as { operation: typeof op }).operation;
  if (reservedMs === null && op.progress.phase === 'pay') reservedMs = performance.now() - t0;
  if (['succeeded', 'partial', 'failed', 'canceled'].includes(op.status)) break;
  await new Promise((r) => setTimeout(r, 20));
}
const totalMs = performance.now() - t0;
const inv = await ledgerInvariant(prisma, orgId);
const r1 = (x: number | null) => (x === null ? null : Math.round(x));
console.log(
  JSON.stringify({
    db: db === 'pglite' ? 'pglite' : 'postgres',
    entities,
    status: op.status,
    payouts: op.result.payouts,
    settled: op.result.settled,
    seedMs: r1(seedMs),
    acceptedMs: r1(accepted),
    reservedMs: r1(reservedMs),
    launchToTerminalMs: r1(totalMs),
    payoutsPerSec: Math.round((op.result.settled ?? 0) / (totalMs / 1000)),
    invariant: inv.ok,
    batch: app.deps.config.payouts?.batch,
    load: os.loadavg()[0],
  }),
);
await app.stop();
if (db === 'pglite') rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
