/**
 * Operation launch to terminal, measured alone (issue #13, operations): N
 * concurrent launchers POST /v1/platform/distributions (sandbox, immediate
 * success) and wait for `operation.succeeded` on the event stream, like
 * `npm run bench -- --only 7`, and also report the server's CPU and the
 * PostgreSQL statements per operation (counted on the `pg` client, every
 * connection of the process: Prisma's adapter, the SQL port, LISTEN).
 *
 *   node --import tsx bench/operations.ts --db postgres://…/bench_ops --seconds 5
 *   node --import tsx bench/operations.ts --db pglite
 *
 * Prints one JSON line. To compare two versions of the code, run each
 * checkout's copy in turns (A, B, A, B) and compare the ratios.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { BENCH_OPERATOR, benchEnv, benchTenant } from './tenant.ts';

const args = process.argv.slice(2);
const flag = (name: string, def: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1]! : def;
};
const db = flag('--db', 'pglite');
const seconds = Number(flag('--seconds', '5'));
const launchers = Number(flag('--concurrency', '8'));

let statements = 0;
/** `--statements FILE`: also write the measured window's statement texts, one a line, to see where they go. */
const statementLog = flag('--statements', '');
const texts: string[] = [];
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
  statements++;
  if (statementLog)
    texts.push(
      String(typeof a[0] === 'string' ? a[0] : (a[0] as { text?: string })?.text)
        .replace(/\s+/g, ' ')
        .slice(0, 200),
    );
  return (query as (...x: unknown[]) => unknown).apply(this, a);
} as typeof query;

const dataDir = db === 'pglite' ? mkdtempSync(join(os.tmpdir(), 'bench-ops-')) : 'memory://';
const app = await buildApp(loadConfig(benchEnv(dataDir, db === 'pglite' ? '' : db)));
await app.start();
const origin = app.urls.api_origin;
const { created, secret } = await benchTenant(origin, BENCH_OPERATOR, [
  'events:read',
  'distributions:read',
  'distributions:write',
  'distributions:launch',
]);
const orgId = created.organization.id as string;

const waiting = new Map<string, (at: number) => void>();
/** Terminal events that arrived before their launcher's 202 was read (a launch run at its commit can finish first). */
const early = new Map<string, number>();
const feed = app.stream.subscribe(orgId, {});
void (async () => {
  for await (const e of feed) {
    if (!e.type.startsWith('operation.') || !e.operation) continue;
    const resolve = waiting.get(e.operation);
    if (resolve) resolve(performance.now());
    else early.set(e.operation, performance.now());
  }
})();

const lat: number[] = [];
/** Time to the 202 of each completed launch (the request path, queueing for the database included). */
const accepted: number[] = [];
/** Latencies of launches whose 202 said `pending` (no free slot: enqueued and claimed later) and `running` (run at their commit). */
const byStart: Record<string, number[]> = { pending: [], running: [] };
let failed = 0;
async function one(): Promise<void> {
  const t0 = performance.now();
  const res = await fetch(`${origin}/v1/platform/distributions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ name: 'bench', budget: 0, deployments: [{ provider: 'sandbox', config: {} }] }),
  });
  const body = (await res.json()) as { operation: { id: string; status: string } };
  if (res.status !== 202) {
    failed++;
    return;
  }
  const id = body.operation.id;
  const t202 = performance.now();
  const at =
    early.get(id) ??
    (await new Promise<number>((resolve) => {
      waiting.set(id, resolve);
      setTimeout(() => resolve(NaN), 30_000).unref();
    }));
  waiting.delete(id);
  early.delete(id);
  if (Number.isNaN(at)) failed++;
  else {
    lat.push(at - t0);
    accepted.push(t202 - t0);
    byStart[body.operation.status]?.push(at - t0);
  }
}

const runFor = async (s: number) => {
  const until = performance.now() + s * 1000;
  await Promise.all(
    Array.from({ length: launchers }, async () => {
      while (performance.now() < until) await one();
    }),
  );
};
await runFor(1); // warm-up
lat.length = 0;
accepted.length = 0;
byStart.pending!.length = byStart.running!.length = 0;
failed = 0;
statements = 0;
texts.length = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await runFor(seconds);
const elapsed = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const n = lat.length;
const pct = (p: number, of = lat) => [...of].sort((a, b) => a - b)[Math.min(of.length - 1, Math.floor((p / 100) * of.length))];
const r = (x: number | undefined, d = 1) => (x === undefined ? null : +x.toFixed(d));
console.log(
  JSON.stringify({
    db: db === 'pglite' ? 'pglite' : 'postgres',
    launchers,
    opsPerSec: r(n / elapsed),
    p50ms: r(pct(50)),
    p99ms: r(pct(99)),
    failed,
    // Launches that found no free slot, and their median and worst-percentile latency.
    queued: byStart.pending!.length,
    queuedP50ms: r(pct(50, byStart.pending!)),
    queuedP99ms: r(pct(99, byStart.pending!)),
    acceptedP50ms: r(pct(50, accepted)),
    acceptedP99ms: r(pct(99, accepted)),
    inlineP50ms: r(pct(50, byStart.running!)),
    // Process CPU (user + system) per launch, including the HTTP client (fetch) driving the load.
    cpuMsPerOp: r((cpu.user + cpu.system) / 1000 / n, 2),
    pgStatementsPerOp: db === 'pglite' ? null : r(statements / n, 1),
    load: os.loadavg()[0],
  }),
);
if (statementLog) writeFileSync(statementLog, `${texts.join('\n')}\n`);
await feed.return?.();
await app.stop();
if (db === 'pglite') rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
