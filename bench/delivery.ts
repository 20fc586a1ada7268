/**
 * Webhook delivery benchmark (a script, not a test): N endpoints on one local
 * receiver, M events appended; reports deliveries per second for a burst, and
 * append-to-receipt latency p50/p99 at a steady append rate.
 *
 *   npm run bench:delivery                                  # embedded PGlite (in memory)
 *   DATABASE_URL=postgres://… npm run bench:delivery        # PostgreSQL (use an empty database)
 *   BENCH_ENDPOINTS=10 BENCH_EVENTS=1000 BENCH_RATE=200 BENCH_SECONDS=10 npm run bench:delivery
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.ts';
import { benchTenant } from './tenant.ts';
import { loadConfig } from '../src/config.ts';
import { appendEvent } from '../src/domain/event/event.ts';

const N = Number(process.env.BENCH_ENDPOINTS ?? 10);
const M = Number(process.env.BENCH_EVENTS ?? 1000);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

const appended = new Map<string, number>();
const latencies: number[] = [];
let received = 0;
let lastReceipt = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const at = performance.now();
    const t0 = appended.get(String(req.headers['webhook-id']));
    if (t0 !== undefined) latencies.push(at - t0);
    received++;
    lastReceipt = at;
    res.end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const { port } = receiver.address() as AddressInfo;

const operatorToken = 'op_bench_0123456789abcdef';
// The receiver is on 127.0.0.1: loopback delivery on explicitly (its default is off on PostgreSQL).
const config = loadConfig({
  ...process.env,
  LOG_LEVEL: 'warn',
  PORT: '0',
  BOOTSTRAP: '0',
  OPERATOR_TOKEN: operatorToken,
  DATA_DIR: process.env.DATA_DIR ?? 'memory://',
  WEBHOOK_ALLOW_LOOPBACK: '1',
});
const app = await buildApp(config);
await app.start();
const origin = app.urls.api_origin;
const { post, created, secret } = await benchTenant(origin, operatorToken, ['webhooks:write']);
for (let i = 0; i < N; i++) await post('/v1/platform/webhook_endpoints', { url: `http://127.0.0.1:${port}/e${i}` }, secret);
const orgId = created.organization.id as string;
const { deps } = app;

async function append(): Promise<void> {
  const id = await deps.db.transaction((tx) => appendEvent(deps, tx, { organizationId: orgId, type: 'assertion.created', subject: { type: 'entity', id: 'ent_bench' }, data: {} }));
  appended.set(id, performance.now());
}
async function waitFor(n: number, timeoutMs = 120_000) {
  const until = performance.now() + timeoutMs;
  while (received < n && performance.now() < until) await new Promise((r) => setTimeout(r, 5));
}
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

// Burst: M events appended as fast as 8 concurrent writers go; throughput over the whole run.
const start = performance.now();
let next = 0;
await Promise.all(Array.from({ length: 8 }, async () => { while (next++ < M) await append(); }));
await waitFor(N * M);
const burstSeconds = (lastReceipt - start) / 1000;
const burst = { deliveries: received, seconds: +burstSeconds.toFixed(2), deliveriesPerSecond: Math.round(received / burstSeconds) };

// Steady: RATE events/s for SECONDS; latency from commit of the append to receipt.
latencies.length = 0;
const before = received;
const total = RATE * SECONDS;
const t0 = performance.now();
for (let i = 0; i < total; i++) {
  const due = t0 + (i * 1000) / RATE;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  void append();
}
await waitFor(before + total * N);
const steady = {
  eventsPerSecond: RATE,
  deliveriesPerSecond: RATE * N,
  received: received - before,
  p50ms: +pct(latencies, 50).toFixed(1),
  p99ms: +pct(latencies, 99).toFixed(1),
  maxms: +Math.max(...latencies).toFixed(1),
};
console.log(JSON.stringify({ database: deps.db.kind, endpoints: N, events: M, burst, steady, maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }, null, 2));
await app.stop();
receiver.close();
process.exit(0);
