/**
 * `npm run bench`: every scenario of the benchmark issue, each next to its
 * baseline in the same run (this machine's absolute speed drifts; ratios are
 * what we compare). Starts what it needs: the API in-process (buildApp) on
 * embedded PGlite in a temp directory, then on a throwaway PostgreSQL started
 * with .ci/pg-throwaway. All load is on loopback and bounded in time.
 *
 *   npm run bench                      # everything, both databases (~8 min)
 *   npm run bench -- --quick           # shorter runs (~2 min)
 *   npm run bench -- --only 1,2 --db postgres
 *
 * Writes bench/results/latest.json, latest.md and latest.svg (bench/chart.ts).
 */
import { execFileSync, fork, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import Koa from 'koa';
import pg from 'pg';
import { createSchema, createYoga } from 'graphql-yoga';
import { buildApp, type App } from '../src/app.ts';
import { benchTenant } from './tenant.ts';
import { loadConfig } from '../src/config.ts';
import { appendEvent, feedPageStatement, presentEvent } from '../src/domain/event/event.ts';
import { PUBLIC_EVENT_TYPES } from '../src/domain/event/types.ts';
import { newId } from '../src/domain/id.ts';
import { renderChart } from './chart.ts';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const QUICK = args.includes('--quick');
const ONLY = new Set((flag('--only') ?? '1,2,3,4,5,6,7').split(',').map(Number));
const DBS = (flag('--db') ?? 'pglite,postgres').split(',') as ('pglite' | 'postgres')[];
const DURATION = Number(flag('--duration') ?? (QUICK ? 3 : 8));
const CONNECTIONS = 16;

export interface Row {
  scenario: number;
  database: string;
  name: string;
  unit: string;
  throughput: number;
  p50ms: number | null;
  p99ms: number | null;
  peakRssMb: number;
  ratio?: { of: string; value: number; target?: number; goal?: number };
  extra?: Record<string, unknown>;
}
const rows: Row[] = [];
const log = (...a: unknown[]) => console.error('[bench]', ...a);
const round = (x: number, d = 1) => (Number.isFinite(x) ? +x.toFixed(d) : x);

// ---------------------------------------------------------------------------
// Measuring helpers

/** Peak resident set size of this process (API + load generator threads) while `fn` runs. */
async function withPeakRss<T>(fn: () => Promise<T>): Promise<[T, number]> {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 100);
  try {
    const out = await fn();
    peak = Math.max(peak, process.memoryUsage.rss());
    return [out, round(peak / 2 ** 20)];
  } finally {
    clearInterval(timer);
  }
}

interface HttpLoad {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  idReplacement?: boolean;
  connections?: number;
  duration?: number;
}

/** autocannon in a worker thread (so the load generator does not share the server's event loop). */
async function httpLoad(o: HttpLoad) {
  const run = (duration: number) =>
    autocannon({
      url: o.url,
      method: o.method ?? 'GET',
      headers: o.headers,
      body: o.body,
      idReplacement: o.idReplacement,
      connections: o.connections ?? CONNECTIONS,
      duration,
      workers: 1,
    });
  await run(1); // warm-up: JIT, pools, caches
  const [r, peakRssMb] = await withPeakRss(() => run(o.duration ?? DURATION));
  const ok = r.requests.total - r.non2xx;
  if (r.non2xx || r.errors) log(`${o.method ?? 'GET'} ${o.url}: ${r.non2xx} non-2xx, ${r.errors} errors of ${r.requests.total}`);
  return { rps: round(ok / (r.duration || o.duration || DURATION)), p50: r.latency.p50, p99: r.latency.p99, peakRssMb, non2xx: r.non2xx, errors: r.errors };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};

function listen(server: Server): Promise<string> {
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

// ---------------------------------------------------------------------------
// The system under test and its baselines

interface Target {
  kind: 'pglite' | 'postgres';
  app: App;
  origin: string;
  orgId: string;
  secret: string;
  /** Runs SQL on the same database as the app, bypassing Prisma and the HTTP stack. */
  query: (sql: string, params: unknown[]) => Promise<{ rows: any[] }>;
  rawPool?: pg.Pool;
  databaseUrl?: string;
  stop(): Promise<void>;
}

const OPERATOR = 'op_bench_0123456789abcdef';

async function startTarget(kind: 'pglite' | 'postgres', databaseUrl?: string): Promise<Target> {
  const dataDir = kind === 'pglite' ? mkdtempSync(join(os.tmpdir(), 'bench-pglite-')) : 'memory://';
  const config = loadConfig({
    ...process.env,
    // autocannon cuts its connections mid-request when a run ends; the server would log each as a parse error.
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'fatal',
    HOST: '127.0.0.1',
    PORT: '0',
    BOOTSTRAP: '0',
    OPERATOR_TOKEN: OPERATOR,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl ?? '',
    // The per-token rate limit would cap every run at 100 req/s; the benchmark measures the stack.
    RATE_LIMIT_PER_SECOND: '10000000',
    RATE_LIMIT_BURST: '10000000',
  });
  const app = await buildApp(config);
  await app.start();
  const origin = app.urls.api_origin;
  const { created, secret } = await benchTenant(origin, OPERATOR, [
    'events:read',
    'assertions:write',
    'distributions:read',
    'distributions:write',
    'distributions:launch',
  ]);
  const rawPool = databaseUrl ? new pg.Pool({ connectionString: databaseUrl, max: CONNECTIONS }) : undefined;
  const query = rawPool
    ? (sql: string, params: unknown[]) => rawPool.query(sql, params as any[])
    : (sql: string, params: unknown[]) => app.deps.db.pglite!.query<any>(sql, params as any[]);
  return {
    kind,
    app,
    origin,
    orgId: created.organization.id,
    secret,
    query,
    rawPool,
    databaseUrl,
    stop: async () => {
      await rawPool?.end();
      await app.stop();
      if (kind === 'pglite') rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function seedFeed(t: Target, n: number) {
  for (let i = 0; i < n; i += 50) {
    await t.app.deps.db.transaction(async (tx) => {
      for (let j = 0; j < 50; j++) {
        await appendEvent(t.app.deps, tx, { organizationId: t.orgId, type: 'assertion.created', subject: { type: 'entity', id: `ent_seed${i + j}` }, data: { key: 'seed', value: i + j } });
      }
    });
  }
  await t.app.sequencer.flush();
}

/** The floor runs the feed's own statement (the SQL port's) on a raw pool, without the API around it. */
async function feedPage(t: Target, limit: number) {
  const { rows: r } = await t.query(feedPageStatement.text, [t.orgId, '-1', [...PUBLIC_EVENT_TYPES], limit + 1]);
  return { object: 'list', data: r.slice(0, limit).map(presentEvent), has_more: r.length > limit };
}

/** The floor: a bare Koa handler running the feed SQL with raw `pg` (or PGlite) on the same database. */
async function bareKoa(t: Target): Promise<{ url: string; close(): void }> {
  const koa = new Koa();
  koa.use(async (ctx) => {
    ctx.body = await feedPage(t, Number(ctx.query.limit ?? 20));
  });
  const server = createServer(koa.callback());
  const url = await listen(server);
  return { url, close: () => server.close() };
}

const EVENTS_QUERY = 'query Feed($first: Int) { events(first: $first) { edges { cursor node { id type seq subject { type id } data operation livemode createdAt } } pageInfo { hasNextPage endCursor } } }';

/** A bare graphql-yoga (no Koa, no auth, no Pothos) answering the same query from the same SQL. */
async function bareYoga(t: Target): Promise<{ url: string; close(): void }> {
  const yoga = createYoga({
    logging: false,
    landingPage: false,
    schema: createSchema({
      typeDefs: /* GraphQL */ `
        scalar JSON
        type EventSubject { type: String! id: String! }
        type Event { id: ID! type: String! seq: Int! subject: EventSubject! data: JSON operation: String livemode: Boolean! createdAt: String! }
        type EventEdge { cursor: String! node: Event! }
        type PageInfo { hasNextPage: Boolean! endCursor: String }
        type EventConnection { edges: [EventEdge!]! pageInfo: PageInfo! }
        type Query { events(first: Int): EventConnection! }
      `,
      resolvers: {
        Event: { createdAt: (e: { created_at: string }) => e.created_at },
        Query: {
          events: async (_: unknown, a: { first?: number }) => {
            const page = await feedPage(t, a.first ?? 20);
            return {
              edges: page.data.map((node) => ({ cursor: String(node.seq), node })),
              pageInfo: { hasNextPage: page.has_more, endCursor: page.data.at(-1) ? String(page.data.at(-1)!.seq) : null },
            };
          },
        },
      },
    }),
  });
  const server = createServer(yoga);
  const url = await listen(server);
  return { url: `${url}/graphql`, close: () => server.close() };
}

// ---------------------------------------------------------------------------
// Scenarios

function push(row: Row) {
  rows.push(row);
  log(`${new Date().toISOString().slice(11, 19)} `+`${row.database} S${row.scenario} ${row.name}: ${row.throughput} ${row.unit}, p50 ${row.p50ms} ms, p99 ${row.p99ms} ms, peak RSS ${row.peakRssMb} MiB${row.ratio ? `, ${row.ratio.value} of ${row.ratio.of}` : ''}`);
}

async function scenario1(t: Target) {
  const bare = await bareKoa(t);
  const auth = { authorization: `Bearer ${t.secret}` };
  try {
    const floor = await httpLoad({ url: `${bare.url}/events?limit=100` });
    const rest = await httpLoad({ url: `${t.origin}/v1/platform/events?limit=100`, headers: auth });
    push({ scenario: 1, database: t.kind, name: 'bare Koa + raw SQL (baseline)', unit: 'req/s', throughput: floor.rps, p50ms: floor.p50, p99ms: floor.p99, peakRssMb: floor.peakRssMb });
    push({
      scenario: 1, database: t.kind, name: 'REST GET /v1/platform/events?limit=100', unit: 'req/s', throughput: rest.rps, p50ms: rest.p50, p99ms: rest.p99, peakRssMb: rest.peakRssMb,
      ratio: { of: 'bare Koa', value: round(rest.rps / floor.rps, 2), target: 0.5, goal: 0.7 },
    });
    return rest;
  } finally {
    bare.close();
  }
}

async function scenario2(t: Target, restRps?: number) {
  const auth = { authorization: `Bearer ${t.secret}` };
  const body = JSON.stringify({ query: EVENTS_QUERY, variables: { first: 100 } });
  const getQs = `?query=${encodeURIComponent(EVENTS_QUERY)}&variables=${encodeURIComponent(JSON.stringify({ first: 100 }))}`;
  const json = { 'content-type': 'application/json', accept: 'application/json' };
  const bare = await bareYoga(t);
  try {
    const rest = restRps ?? (await httpLoad({ url: `${t.origin}/v1/platform/events?limit=100`, headers: auth })).rps;
    const bPost = await httpLoad({ url: bare.url, method: 'POST', headers: json, body });
    const bGet = await httpLoad({ url: bare.url + getQs, headers: { accept: 'application/json' } });
    const post = await httpLoad({ url: `${t.origin}/graphql`, method: 'POST', headers: { ...json, ...auth }, body });
    const get = await httpLoad({ url: `${t.origin}/graphql${getQs}`, headers: { accept: 'application/json', ...auth } });
    const base = { scenario: 2, database: t.kind, unit: 'req/s' };
    push({ ...base, name: 'bare Yoga POST events(first:100)', throughput: bPost.rps, p50ms: bPost.p50, p99ms: bPost.p99, peakRssMb: bPost.peakRssMb });
    push({ ...base, name: 'bare Yoga GET events(first:100)', throughput: bGet.rps, p50ms: bGet.p50, p99ms: bGet.p99, peakRssMb: bGet.peakRssMb });
    push({ ...base, name: 'GraphQL POST events(first:100)', throughput: post.rps, p50ms: post.p50, p99ms: post.p99, peakRssMb: post.peakRssMb, ratio: { of: 'REST', value: round(post.rps / rest, 2), target: 0.8 }, extra: { ofBareYogaPost: round(post.rps / bPost.rps, 2) } });
    push({ ...base, name: 'GraphQL GET events(first:100)', throughput: get.rps, p50ms: get.p50, p99ms: get.p99, peakRssMb: get.peakRssMb, ratio: { of: 'REST', value: round(get.rps / rest, 2), target: 0.8 }, extra: { ofBareYogaGet: round(get.rps / bGet.rps, 2) } });
  } finally {
    bare.close();
  }
}

/** 16 concurrent closed-loop callers of `fn` for `seconds`: completions per second and latency. */
async function closedLoop(seconds: number, fn: () => Promise<unknown>) {
  const lat: number[] = [];
  let errors = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        try {
          await fn();
          lat.push(performance.now() - t0);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  if (errors) log(`closed loop: ${errors} errors next to ${lat.length} successes`);
  return { rps: round(lat.length / elapsed), p50: round(pct(lat, 50), 2), p99: round(pct(lat, 99), 2), errors };
}

/** One event row per autocommit INSERT with raw SQL: the durable single-row commit ceiling. */
const rawInserts = (t: Target, seconds: number) =>
  closedLoop(seconds, () =>
    t.query(
      'INSERT INTO event (id, organization_id, type, subject_type, subject_id, data, created_at) VALUES ($1, $2, $3, $4, $5, $6, now())',
      [newId('event'), t.orgId, 'assertion.created', 'entity', 'ent_raw', JSON.stringify({ key: 'raw' })],
    ),
  );

async function scenario3(t: Target) {
  await rawInserts(t, 1);
  const [raw, rawRss] = await withPeakRss(() => rawInserts(t, DURATION));
  // Our own closed loop, like the baseline's (autocannon 8's idReplacement sent no request here).
  const assertOnce = async () => {
    const res = await fetch(`${t.origin}/v1/platform/assertions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.secret}`, 'content-type': 'application/json' },
      // A new subject per request, so every request appends (a repeated claim appends nothing).
      body: JSON.stringify({ external_user_id: `u-${randomUUID()}`, issuer: 'https://idp.example', key: 'bench', value: 1 }),
    });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`POST /assertions: ${res.status}`);
  };
  await closedLoop(1, assertOnce);
  const [m, mRss] = await withPeakRss(() => closedLoop(DURATION, assertOnce));
  const mutation = { ...m, peakRssMb: mRss };
  await t.app.sequencer.flush();
  push({ scenario: 3, database: t.kind, name: 'raw pg insert of one event row, 16 writers (baseline)', unit: 'rows/s', throughput: raw.rps, p50ms: raw.p50, p99ms: raw.p99, peakRssMb: rawRss });
  push({
    scenario: 3, database: t.kind, name: 'POST /v1/platform/assertions, 16 concurrent callers', unit: 'req/s', throughput: mutation.rps, p50ms: mutation.p50, p99ms: mutation.p99, peakRssMb: mutation.peakRssMb,
    ratio: { of: 'raw insert', value: round(mutation.rps / raw.rps, 2), target: 0.25 },
  });
}

async function scenario4(t: Target) {
  // bench/delivery.ts in its own process (its own app, its own receiver), on its own database.
  const env: Record<string, string> = { ...(process.env as Record<string, string>), LOG_LEVEL: 'warn' };
  if (t.kind === 'postgres') {
    await t.query('DROP DATABASE IF EXISTS bench_delivery', []);
    await t.query('CREATE DATABASE bench_delivery', []);
    env.DATABASE_URL = t.databaseUrl!.replace(/\/[^/]*$/, '/bench_delivery');
    Object.assign(env, { BENCH_ENDPOINTS: '10', BENCH_EVENTS: QUICK ? '200' : '500', BENCH_RATE: '100', BENCH_SECONDS: QUICK ? '3' : '5' });
  } else {
    env.DATABASE_URL = '';
    env.DATA_DIR = 'memory://';
    Object.assign(env, { BENCH_ENDPOINTS: '2', BENCH_EVENTS: QUICK ? '50' : '100', BENCH_RATE: '20', BENCH_SECONDS: QUICK ? '2' : '3' });
  }
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'delivery.ts')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let s = '';
    child.stdout.on('data', (d) => (s += d));
    const kill = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('exit', (code) => (clearTimeout(kill), code === 0 ? resolve(s) : reject(new Error(`delivery bench exited ${code}`))));
  });
  const r = JSON.parse(out.slice(out.indexOf('{')));
  push({
    scenario: 4, database: t.kind, name: `webhook delivery: burst ${r.endpoints} endpoints × ${r.events} events; steady ${r.steady.eventsPerSecond} ev/s`, unit: 'deliveries/s',
    throughput: r.burst.deliveriesPerSecond, p50ms: r.steady.p50ms, p99ms: r.steady.p99ms, peakRssMb: r.maxRssMb ?? NaN,
    extra: { burst: r.burst, steady: r.steady, latency: 'append commit to receipt at the steady rate' },
  });
}

async function scenario5(t: Target, k: number, rate: number, seconds: number) {
  const gc = (globalThis as { gc?: () => void }).gc;
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc?.();
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  await settle();
  const before = { rss: process.memoryUsage.rss(), heap: process.memoryUsage().heapUsed };
  const child = fork(join(here, 'ws-load.ts'), [t.origin, t.secret, String(k)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = () => new Promise<any>((r) => child.once('message', r));
  const connected = await next();
  const until = Date.now() + 60_000;
  while (t.app.stream.subscriberCount < k && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  const subscribed = t.app.stream.subscriberCount;
  await settle();
  const idle = { rss: process.memoryUsage.rss(), heap: process.memoryUsage().heapUsed };
  let appendFailures = 0;
  const [sent, peakRssMb] = await withPeakRss(async () => {
    const total = rate * seconds;
    const t0 = performance.now();
    for (let i = 0; i < total; i++) {
      const wait = t0 + (i * 1000) / rate - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      void t.app.deps.db.transaction((tx) =>
        appendEvent(t.app.deps, tx, { organizationId: t.orgId, type: 'assertion.created', subject: { type: 'entity', id: 'ent_live' }, data: { t: performance.timeOrigin + performance.now() } }),
      ).catch(() => appendFailures++);
    }
    await t.app.sequencer.flush();
    // Let the last events reach every subscriber (bounded).
    const deadline = Date.now() + 20_000;
    for (;;) {
      child.send({ report: true });
      const r = await next();
      if (r.received >= (total - appendFailures) * subscribed || Date.now() > deadline) return { total: total - appendFailures, report: r };
      await new Promise((res) => setTimeout(res, 250));
    }
  });
  child.send({ close: true });
  await new Promise((r) => child.once('exit', r));
  const { report } = sent;
  push({
    scenario: 5, database: t.kind, name: `${k} graphql-ws subscribers, ${rate} events/s for ${seconds} s`, unit: 'messages/s',
    throughput: round(report.received / seconds), p50ms: round(report.p50, 1), p99ms: round(report.p99, 1), peakRssMb,
    extra: {
      subscribers: subscribed, connectErrors: connected.errors, appendFailures, expected: sent.total * subscribed, received: report.received, errors: report.errors,
      idleRssKiBPerSubscriber: round((idle.rss - before.rss) / 1024 / k, 1),
      idleHeapKiBPerSubscriber: round((idle.heap - before.heap) / 1024 / k, 1),
      loadGeneratorRssMb: round(report.rssMb),
      target: k === 1000 ? 'p99 < 100 ms' : k >= 5000 ? 'served, < 20 KiB per idle subscriber' : undefined,
    },
  });
}

async function scenario6(t: Target, seconds: number) {
  // A fresh organization, so its feed holds only what the writers append.
  const slug = `tail-${Date.now()}`;
  const res = await fetch(`${t.origin}/operator/organizations`, { method: 'POST', headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: slug, slug, brands: [{ slug: 'main', name: 'Main' }] }) });
  const created = (await res.json()) as any;
  const tok = (await (await fetch(`${t.origin}/platform/tokens/create`, { method: 'POST', headers: { authorization: `Bearer ${created.user_token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'tail', scopes: ['events:read'] }) })).json()) as any;
  const orgId = created.organization.id as string;
  let writing = true;
  let written = 0;
  // Writers stop on their own deadline too: on PGlite a reader can starve while write transactions queue back to back.
  const writeUntil = performance.now() + seconds * 1000;
  const writers = Array.from({ length: 8 }, async () => {
    while (writing && performance.now() < writeUntil) {
      await t.app.deps.db.transaction((tx) => appendEvent(t.app.deps, tx, { organizationId: orgId, type: 'assertion.created', subject: { type: 'entity', id: 'ent_tail' }, data: {} }));
      written++;
    }
  });
  const seen: string[] = [];
  const lat: number[] = [];
  let after = '0';
  let outOfOrder = 0;
  let lastSeq = 0;
  const page = async () => {
    const t0 = performance.now();
    const r = await fetch(`${t.origin}/v1/platform/events?limit=100&starting_after=${after}`, { headers: { authorization: `Bearer ${tok.secret}` } });
    const body = (await r.json()) as { data: { id: string; seq: number }[] };
    lat.push(performance.now() - t0);
    for (const e of body.data) {
      if (e.seq <= lastSeq) outOfOrder++;
      lastSeq = e.seq;
      seen.push(e.id);
    }
    if (body.data.length) after = String(body.data.at(-1)!.seq);
    return body.data.length;
  };
  const [readDuring, peakRssMb] = await withPeakRss(async () => {
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) if ((await page()) === 0) await new Promise((r) => setTimeout(r, 5));
    const n = seen.length;
    writing = false;
    await Promise.all(writers);
    return n;
  });
  await t.app.sequencer.flush();
  while ((await page()) > 0);
  const all = await t.query('SELECT id FROM event WHERE organization_id = $1 AND seq IS NOT NULL ORDER BY seq', [orgId]);
  const read = new Set(seen);
  const gaps = all.rows.filter((r) => !read.has(r.id)).length;
  push({
    scenario: 6, database: t.kind, name: 'feed tailing (limit=100) under 8 concurrent writers', unit: 'events/s read', throughput: round(readDuring / seconds), p50ms: round(pct(lat, 50), 2), p99ms: round(pct(lat, 99), 2), peakRssMb,
    extra: { written, read: seen.length, committed: all.rows.length, gaps, outOfOrder, target: 'gaps = 0', latency: 'per page request' },
  });
}

async function scenario7(t: Target, seconds: number) {
  const auth = { authorization: `Bearer ${t.secret}`, 'content-type': 'application/json' };
  const waiting = new Map<string, (at: number) => void>();
  const TERMINAL = new Set(['operation.succeeded', 'operation.failed', 'operation.partial', 'operation.canceled', 'operation.cancelled']);
  const feed = t.app.stream.subscribe(t.orgId, {});
  void (async () => {
    for await (const e of feed) if (TERMINAL.has(e.type) && e.operation) waiting.get(e.operation)?.(performance.now());
  })();
  await new Promise((r) => setTimeout(r, 300));
  const lat: number[] = [];
  let done = 0;
  let failed = 0;
  const one = async () => {
    const t0 = performance.now();
    const res = await fetch(`${t.origin}/v1/platform/distributions`, { method: 'POST', headers: { ...auth, 'idempotency-key': randomUUID() }, body: JSON.stringify({ name: 'bench', budget: 0, deployments: [{ provider: 'sandbox', config: {} }] }) });
    const body = (await res.json()) as any;
    if (res.status !== 202) {
      failed++;
      return;
    }
    const at = await new Promise<number>((resolve) => {
      waiting.set(body.operation.id, resolve);
      setTimeout(() => resolve(NaN), 30_000);
    });
    waiting.delete(body.operation.id);
    if (Number.isNaN(at)) failed++;
    else (lat.push(at - t0), done++);
  };
  const [elapsed, peakRssMb] = await withPeakRss(async () => {
    const started = performance.now();
    const until = started + seconds * 1000;
    await Promise.all(Array.from({ length: 8 }, async () => { while (performance.now() < until) await one(); }));
    return (performance.now() - started) / 1000;
  });
  await feed.return?.();
  push({
    scenario: 7, database: t.kind, name: 'operation launch to terminal (sandbox, immediate success), 8 concurrent', unit: 'operations/s', throughput: round(done / elapsed, 1), p50ms: round(pct(lat, 50), 1), p99ms: round(pct(lat, 99), 1), peakRssMb,
    extra: { completed: done, failed, latency: 'POST /distributions to operation.succeeded on the event stream' },
  });
}

// ---------------------------------------------------------------------------

function startPostgres(): { url: string; stop(): void } {
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-pg-'));
  rmSync(dir, { recursive: true, force: true });
  const port = String(56_000 + Math.floor(Math.random() * 2000));
  const script = join(here, '..', '.ci', 'pg-throwaway');
  const url = execFileSync(script, ['start', dir, port], { encoding: 'utf8' }).trim().split('\n').at(-1)!;
  return { url, stop: () => execFileSync(script, ['stop', dir]) };
}

async function runOn(kind: 'pglite' | 'postgres') {
  const pgServer = kind === 'postgres' ? startPostgres() : undefined;
  log(`${kind}: starting${pgServer ? ` (${pgServer.url})` : ''}`);
  const t = await startTarget(kind, pgServer?.url);
  try {
    await seedFeed(t, 300);
    let rest: { rps: number } | undefined;
    if (ONLY.has(1)) rest = await scenario1(t);
    if (ONLY.has(2)) await scenario2(t, rest?.rps);
    if (ONLY.has(3)) await scenario3(t);
    if (ONLY.has(6)) await scenario6(t, DURATION);
    if (ONLY.has(7)) await scenario7(t, DURATION);
    if (ONLY.has(5)) {
      const ks = kind === 'postgres' ? (QUICK ? [100, 1000] : [100, 1000, 5000]) : [100];
      for (const k of ks) await scenario5(t, k, k >= 5000 ? 10 : 100, QUICK ? 3 : 5);
    }
    if (ONLY.has(4)) await scenario4(t);
  } finally {
    await t.stop();
    pgServer?.stop();
  }
}

const startedAt = new Date();
const load = { before: os.loadavg().map((x) => round(x, 2)) };
for (const kind of DBS) await runOn(kind);
const machine = {
  cpus: os.cpus().length,
  cpu: os.cpus()[0]?.model,
  memoryGiB: round(os.totalmem() / 2 ** 30),
  node: process.version,
  platform: `${os.platform()} ${os.release()}`,
  loadavg: { ...load, after: os.loadavg().map((x) => round(x, 2)) },
};
const result = { date: startedAt.toISOString(), seconds: round((Date.now() - startedAt.getTime()) / 1000), mode: QUICK ? 'quick' : 'full', durationPerRun: DURATION, connections: CONNECTIONS, machine, rows };
const outDir = join(here, 'results');
mkdirSync(outDir, { recursive: true });
const suffix = ONLY.size === 7 && DBS.length === 2 ? 'latest' : `partial-${[...ONLY].join('')}`;
writeFileSync(join(outDir, `${suffix}.json`), JSON.stringify(result, null, 2) + '\n');
writeFileSync(join(outDir, `${suffix}.md`), markdown(result));
writeFileSync(join(outDir, `${suffix}.svg`), renderChart(rows));
log(`wrote bench/results/${suffix}.{json,md,svg} in ${result.seconds} s`);
process.exit(0);

function markdown(r: typeof result): string {
  const fmt = (x: number | null | undefined) => (x == null || Number.isNaN(x) ? '–' : String(x));
  const lines = [
    `# Benchmark results (${r.mode})`,
    '',
    `${r.date.slice(0, 10)}; ${r.machine.cpus} × ${r.machine.cpu}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}; load average ${r.machine.loadavg.before.join(' ')} before, ${r.machine.loadavg.after.join(' ')} after (shared machine: compare ratios, not absolute figures). ${r.durationPerRun} s per HTTP run, ${r.connections} connections, after a 1 s warm-up. Peak RSS is the benchmark process (API + load generator thread) during the run.`,
    '',
    '| # | DB | Scenario | Throughput | p50 ms | p99 ms | Peak RSS MiB | Ratio | Target |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of r.rows) {
    const ratio = row.ratio ? `${row.ratio.value} of ${row.ratio.of}` : '';
    const target = row.ratio?.target != null ? `≥ ${row.ratio.target}${row.ratio.goal ? ` (goal ${row.ratio.goal})` : ''}` : ((row.extra?.target as string | undefined) ?? '');
    const notes: string[] = [];
    if (row.extra?.gaps !== undefined) notes.push(`gaps ${row.extra.gaps}, read ${row.extra.read} of ${row.extra.committed}`);
    if (row.extra?.idleRssKiBPerSubscriber !== undefined) notes.push(`${row.extra.subscribers} subscribed; idle ${row.extra.idleRssKiBPerSubscriber} KiB RSS, ${row.extra.idleHeapKiBPerSubscriber} KiB heap per subscriber; received ${row.extra.received} of ${row.extra.expected}`);
    if (row.extra?.failed !== undefined) notes.push(`${row.extra.completed} completed, ${row.extra.failed} failed`);
    if (row.extra?.ofBareYogaPost !== undefined) notes.push(`${row.extra.ofBareYogaPost} of bare Yoga POST`);
    if (row.extra?.ofBareYogaGet !== undefined) notes.push(`${row.extra.ofBareYogaGet} of bare Yoga GET`);
    lines.push(`| ${row.scenario} | ${row.database} | ${row.name}${notes.length ? ` (${notes.join('; ')})` : ''} | ${fmt(row.throughput)} ${row.unit} | ${fmt(row.p50ms)} | ${fmt(row.p99ms)} | ${fmt(row.peakRssMb)} | ${ratio} | ${target} |`);
  }
  lines.push('', '![ratios to baselines](latest.svg)', '');
  return lines.join('\n');
}
