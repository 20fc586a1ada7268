/**
 * Webhook delivery benchmark (a script, not a test): N endpoints on one local
 * receiver, M events appended; reports deliveries per second for a burst of
 * M × N deliveries (with BENCH_ENDPOINTS=1, one endpoint's maximum), and
 * append-to-receipt latency p50/p99 at a steady append rate, and the main
 * thread's CPU per delivery (the receiver runs in a worker thread).
 *
 *   npm run bench:delivery                                  # embedded PGlite (in memory)
 *   DATABASE_URL=postgres://… npm run bench:delivery        # PostgreSQL (use an empty database)
 *   BENCH_ENDPOINTS=10 BENCH_EVENTS=1000 BENCH_RATE=200 BENCH_SECONDS=10 npm run bench:delivery
 */
import { Worker } from 'node:worker_threads';
import { buildApp } from '../src/app.ts';
import { benchTenant } from './tenant.ts';
import { mainThreadCpuMs } from './measure.ts';
import { loadConfig } from '../src/config.ts';
import { appendEvent } from '../src/domain/event/event.ts';

const N = Number(process.env.BENCH_ENDPOINTS ?? 10);
const M = Number(process.env.BENCH_EVENTS ?? 1000);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

// The receiver runs in a worker thread so that the main thread's CPU is the
// server's alone (appends, fan-out, lease, send, record). Receipt times are
// absolute (timeOrigin + now), comparable across threads.
const receiverSource = `
  const { createServer } = require('node:http');
  const { parentPort } = require('node:worker_threads');
  let batch = [], connections = 0, open = 0, maxOpen = 0;
  const server = createServer((req, res) => {
    open++; maxOpen = Math.max(maxOpen, open);
    req.resume();
    req.on('end', () => { batch.push([String(req.headers['webhook-id']), performance.timeOrigin + performance.now()]); open--; res.end(); });
  });
  server.on('connection', () => connections++);
  setInterval(() => { if (batch.length) { parentPort.postMessage({ batch, connections, maxOpen }); batch = []; } }, 5);
  server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
`;
const receiver = new Worker(receiverSource, { eval: true });
const appended = new Map<string, number>();
const latencies: number[] = [];
let received = 0;
let lastReceipt = 0;
let connections = 0;
let maxInFlight = 0;
const port = await new Promise<number>((resolve) =>
  receiver.on('message', (m: { port?: number; batch?: [string, number][]; connections: number; maxOpen: number }) => {
    if (m.port) return resolve(m.port);
    for (const [id, at] of m.batch!) {
      const t0 = appended.get(id);
      if (t0 !== undefined) latencies.push(at - t0);
      received++;
      lastReceipt = Math.max(lastReceipt, at);
    }
    connections = m.connections;
    maxInFlight = m.maxOpen;
  }),
);
const now = () => performance.timeOrigin + performance.now();
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
const endpointIds: string[] = [];
for (let i = 0; i < N; i++)
  endpointIds.push((await post('/v1/platform/webhook_endpoints', { url: `http://127.0.0.1:${port}/e${i}` }, secret)).webhook_endpoint.id);
// The adaptive limit of the first endpoint, sampled every 250 ms during the burst (older code: undefined).
const limitTrace: number[] = [];
const tracer = setInterval(
  () => limitTrace.push((app.webhooks as { endpointLimit?: (id: string) => number }).endpointLimit?.(endpointIds[0]!) ?? NaN),
  250,
);
const orgId = created.organization.id as string;
const { deps } = app;

async function append(): Promise<void> {
  const id = await deps.db.transaction((tx) =>
    appendEvent(deps, tx, {
      test: true,
      organizationId: orgId,
      type: 'assertion.created',
      subject: { type: 'entity', id: 'ent_bench' },
      data: {},
    }),
  );
  appended.set(id, now());
}
async function waitFor(n: number, timeoutMs = 120_000) {
  const until = now() + timeoutMs;
  while (received < n && now() < until) await new Promise((r) => setTimeout(r, 5));
}
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

// Burst: M events appended (8 concurrent writers) while the worker is stopped, then
// the worker started; throughput and main-thread CPU from its start to the last receipt,
// so the figure is delivery alone (fan-out, lease, sign, send, record), not the appends.
await app.webhooks.stop();
let next = 0;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (next++ < M) await append();
  }),
);
await app.sequencer.flush();
const start = now();
const cpu0 = mainThreadCpuMs();
app.webhooks.start();
await waitFor(N * M);
const burstSeconds = (lastReceipt - start) / 1000;
const burst = {
  deliveries: received,
  seconds: +burstSeconds.toFixed(2),
  deliveriesPerSecond: Math.round(received / burstSeconds),
  cpuMsPerDelivery: +((mainThreadCpuMs() - cpu0) / received).toFixed(3),
  receiverConnections: connections,
  receiverMaxInFlight: maxInFlight,
  firstEndpointLimitTrace: limitTrace.join(' '),
};
clearInterval(tracer);

// Steady: RATE events/s for SECONDS; latency from commit of the append to receipt.
latencies.length = 0;
const before = received;
const total = RATE * SECONDS;
const t0 = now();
const cpu1 = mainThreadCpuMs();
for (let i = 0; i < total; i++) {
  const due = t0 + (i * 1000) / RATE;
  const wait = due - now();
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
  cpuMsPerDelivery: +((mainThreadCpuMs() - cpu1) / (received - before)).toFixed(3),
};
console.log(
  JSON.stringify(
    { database: deps.db.kind, endpoints: N, events: M, burst, steady, maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024) },
    null,
    2,
  ),
);
await app.stop();
await receiver.terminate();
process.exit(0);
