/**
 * Operation launch to terminal, measured alone (issue #13, operations): N
 * concurrent launchers POST /v1/platform/distributions (sandbox, immediate
 * success) and wait for their `operation.succeeded` on a live SSE
 * subscription, from a worker thread (bench/launch-worker.mjs), exactly as
 * `npm run bench -- --only 7`; this also reports the server thread's CPU
 * and the PostgreSQL statements per operation (counted on the `pg` client,
 * every connection of the process: Prisma's adapter, the SQL port, LISTEN).
 *
 *   node --import tsx bench/operations.ts --db postgres://…/bench_ops --seconds 5
 *   node --import tsx bench/operations.ts --db pglite
 *   flags: --concurrency <launchers> (8), --statements FILE (the window's statement texts, one a line)
 *
 * Prints one JSON line. To compare two versions of the code, run each
 * checkout's copy in turns (A, B, A, B) and compare the ratios.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { launchLoad } from './measure.ts';
import { quantile, round } from './stats.ts';
import { BENCH_OPERATOR, benchEnv, benchTenant } from './tenant.ts';

const args = process.argv.slice(2);
const flag = (name: string, def: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1]! : def;
};
const db = flag('--db', 'pglite');
const seconds = Number(flag('--seconds', '5'));
const launchers = Number(flag('--concurrency', '8'));
const statementLog = flag('--statements', '');

let counting = false;
let statements = 0;
const texts: string[] = [];
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
  if (counting) {
    statements++;
    if (statementLog)
      texts.push(
        String(typeof a[0] === 'string' ? a[0] : (a[0] as { text?: string })?.text)
          .replace(/\s+/g, ' ')
          .slice(0, 200),
      );
  }
  return (query as (...x: unknown[]) => unknown).apply(this, a);
} as typeof query;

const dataDir = db === 'pglite' ? mkdtempSync(join(os.tmpdir(), 'bench-ops-')) : 'memory://';
const app = await buildApp(loadConfig(benchEnv(dataDir, db === 'pglite' ? '' : db)));
await app.start();
const { secret } = await benchTenant(app.urls.api_origin, BENCH_OPERATOR, [
  'events:read',
  'distributions:read',
  'distributions:write',
  'distributions:launch',
]);

// Statements are counted over the whole run (warm-up included) and divided by all launches the server made.
counting = true;
const r = await launchLoad({ origin: app.urls.api_origin, secret, concurrency: launchers, warmupSeconds: 1, seconds });
counting = false;
const n = r.latencies.length;
const launched = await app.deps.db.prisma.operation.count({ where: { kind: 'distribution.launch' } });
const by = (status: string) => r.latencies.filter((_, i) => r.statuses[i] === status);
const ms = (xs: number[], q: number) => (xs.length ? round(quantile(xs, q), 1) : null);
console.log(
  JSON.stringify({
    db: db === 'pglite' ? 'pglite' : 'postgres',
    launchers,
    opsPerSec: round(n / r.seconds, 1),
    p50ms: ms(r.latencies, 0.5),
    p99ms: ms(r.latencies, 0.99),
    failed: r.failed,
    // Launches that found no free slot (enqueued, claimed later), and their latency.
    queued: by('pending').length,
    queuedP50ms: ms(by('pending'), 0.5),
    queuedP99ms: ms(by('pending'), 0.99),
    acceptedP50ms: ms(r.accepted, 0.5),
    acceptedP99ms: ms(r.accepted, 0.99),
    // Launches run at their commit.
    inlineP50ms: ms(by('running'), 0.5),
    // The server thread's CPU per launch (the launchers and their SSE client are on their own thread).
    cpuMsPerOp: round(r.serverCpuMs / n, 2),
    pgStatementsPerOp: db === 'pglite' ? null : round(statements / launched, 1),
    load: os.loadavg()[0],
  }),
);
if (statementLog) writeFileSync(statementLog, `${texts.join('\n')}\n`);
await app.stop();
if (db === 'pglite') rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
