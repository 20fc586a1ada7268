/**
 * One process against N processes (a script, not a test; ADR 0006). Two
 * topologies on their own databases in one PostgreSQL, run side by side in
 * alternating slices (one, split, one, split…) so machine load falls on both:
 *   one    PLATFORM_ROLE=all, one process (today's default)
 *   split  two PLATFORM_ROLE=api processes and one PLATFORM_ROLE=worker
 * Each slice appends RATE events/s through POST /operator/events on the first
 * API process; an SSE subscriber on the last API process (in `split`, the
 * other process: NOTIFY carries the event) and a webhook endpoint on a local
 * receiver (in `split`, delivered by the worker) time each event from the
 * append request's start to receipt. CPU is every server process's
 * utime+stime from /proc/<pid>/stat over the slice, per event appended.
 *
 *   BENCH_ADMIN_URL=postgres://postgres@127.0.0.1:55432/postgres BENCH_RATE=50 BENCH_SLICE_S=4 BENCH_SLICES=3 npx tsx bench/topology.ts
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { adminQuery } from '../test/support/global-setup.ts';
import { spawnServer, type ServerProcess } from '../test/support/ops-process.ts';
import { SseSubscription } from '../test/support/stream-client.ts';
import { processCpuMs } from './measure.ts';
import { benchTenant } from './tenant.ts';

const ADMIN = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:55432/postgres';
const RATE = Number(process.env.BENCH_RATE ?? 50);
const SLICE_S = Number(process.env.BENCH_SLICE_S ?? 4);
const SLICES = Number(process.env.BENCH_SLICES ?? 3);
const operatorToken = 'op_bench_0123456789abcdef';

const sent = new Map<string, number>();
type Lat = { stream: number[]; webhook: number[] };

const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const k = JSON.parse(Buffer.concat(chunks).toString()).data?.k as string | undefined;
    const t0 = k ? sent.get(k) : undefined;
    if (t0 !== undefined) topologies.find((t) => req.url === `/${t.name}`)?.slice?.webhook.push(performance.now() - t0);
    res.end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const rxPort = (receiver.address() as AddressInfo).port;

const admin = (sql: string) => adminQuery(ADMIN, sql);

interface Topology {
  name: 'one' | 'split';
  procs: { role: string; p: ServerProcess }[];
  writer: string;
  reader: string;
  secret: string;
  orgId: string;
  slice?: Lat;
  lat: Lat;
  cpu: Record<string, number>;
  /** Idle CPU per process (ms per wall second: polls, sweeps, timers), measured after the slices. */
  idle: Record<string, number>;
  wallMs: number;
  events: number;
  sse?: SseSubscription;
}

async function startTopology(name: 'one' | 'split'): Promise<Topology> {
  const db = `bench_scale_${name}`;
  await admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${db}`);
  const url = new URL(ADMIN);
  url.pathname = `/${db}`;
  const env = (role: string) => ({
    PLATFORM_ROLE: role,
    DATABASE_URL: url.toString(),
    PORT: '0',
    OPERATOR_TOKEN: operatorToken,
    BOOTSTRAP: '0',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_LOOPBACK: '1',
    NODE_ENV: 'production',
  });
  const roles = name === 'one' ? ['all'] : ['api', 'api', 'worker'];
  const procs: Topology['procs'] = [];
  // Sequentially: the first one migrates the fresh database.
  for (const role of roles) procs.push({ role, p: await spawnServer(env(role), 90_000) });
  const apis = procs.filter((x) => x.role !== 'worker');
  const { post, created, secret } = await benchTenant(apis[0]!.p.origin, operatorToken, ['events:read', 'webhooks:write']);
  await post('/v1/platform/webhook_endpoints', { url: `http://127.0.0.1:${rxPort}/${name}` }, secret);
  const t: Topology = {
    name,
    procs,
    writer: apis[0]!.p.origin,
    reader: apis.at(-1)!.p.origin,
    secret,
    orgId: created.organization.id,
    lat: { stream: [], webhook: [] },
    cpu: {},
    idle: {},
    wallMs: 0,
    events: 0,
  };
  // On the last API process: in `split`, not the one appended through, so NOTIFY carries every event to it.
  t.sse = new SseSubscription(
    t.reader,
    secret,
    {},
    {
      onEvent: (e) => {
        const t0 = sent.get(e.data?.k);
        if (t0 !== undefined) t.slice?.stream.push(performance.now() - t0);
      },
    },
  );
  return t;
}

let seq = 0;
async function runSlice(t: Topology) {
  t.slice = { stream: [], webhook: [] };
  const before = Object.fromEntries(t.procs.map((x, i) => [`${x.role}${i}`, processCpuMs(x.p.child.pid!)]));
  const n = RATE * SLICE_S;
  const started = performance.now();
  const posts: Promise<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const k = `${t.name}-${++seq}`;
    sent.set(k, performance.now());
    posts.push(
      fetch(`${t.writer}/operator/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ organization_id: t.orgId, type: 'payout.created', subject: { type: 'payout', id: k }, data: { k } }),
      }).then((r) => r.text()),
    );
  }
  await Promise.all(posts);
  const deadline = performance.now() + 60_000;
  while ((t.slice.stream.length < n || t.slice.webhook.length < n) && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  for (const [key, ms] of Object.entries(before)) {
    const pid = t.procs[Number(key.replace(/\D+/, ''))]!.p.child.pid!;
    t.cpu[key] = (t.cpu[key] ?? 0) + processCpuMs(pid) - ms;
  }
  t.events += n;
  t.wallMs += performance.now() - started;
  t.lat.stream.push(...t.slice.stream);
  t.lat.webhook.push(...t.slice.webhook);
  console.log(`${t.name} slice: ${n} appended, ${t.slice.stream.length} streamed, ${t.slice.webhook.length} delivered`);
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

const topologies: Topology[] = [];
try {
  topologies.push(await startTopology('one'), await startTopology('split'));
  const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const loadBefore = load();
  for (let s = 0; s < SLICES; s++) for (const t of s % 2 ? [...topologies].reverse() : topologies) await runSlice(t);
  // Idle cost after the slices (warmed up): both topologies side by side, nothing appended, for IDLE_S seconds.
  const IDLE_S = 5;
  const idleStart = topologies.map((t) => t.procs.map((x) => processCpuMs(x.p.child.pid!)));
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  for (const [ti, t] of topologies.entries()) {
    for (const [i, x] of t.procs.entries()) t.idle[`${x.role}${i}`] = (processCpuMs(x.p.child.pid!) - idleStart[ti]![i]!) / IDLE_S;
  }
  const rows = topologies.map((t) => {
    const total = Object.values(t.cpu).reduce((a, b) => a + b, 0);
    const idle = Object.values(t.idle).reduce((a, b) => a + b, 0);
    return {
      topology: t.name,
      events: t.events,
      'stream p50 ms': pct(t.lat.stream, 50).toFixed(1),
      'stream p99 ms': pct(t.lat.stream, 99).toFixed(1),
      'webhook p50 ms': pct(t.lat.webhook, 50).toFixed(1),
      'webhook p99 ms': pct(t.lat.webhook, 99).toFixed(1),
      'CPU ms/event (all processes)': (total / t.events).toFixed(2),
      'idle CPU ms/s': idle.toFixed(1),
      'CPU ms/event net of idle': ((total - (idle * t.wallMs) / 1000) / t.events).toFixed(2),
      'by process': Object.entries(t.cpu)
        .map(([k, v]) => `${k} ${(v / t.events).toFixed(2)}`)
        .join(', '),
    };
  });
  console.table(rows);
  console.log(
    `load average before ${loadBefore}, after ${load()}; ${RATE} events/s, ${SLICES} slices of ${SLICE_S} s per topology, alternating`,
  );
} finally {
  for (const t of topologies) {
    await t.sse?.close().catch(() => {});
    for (const x of t.procs) await x.p.stop('SIGTERM', 15_000);
  }
  for (const name of ['one', 'split']) await admin(`DROP DATABASE IF EXISTS bench_scale_${name} WITH (FORCE)`).catch(() => {});
  receiver.close();
}
