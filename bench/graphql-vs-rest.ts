/**
 * GraphQL `events(first:100)` by POST and by GET next to REST `GET /v1/platform/events?limit=100`
 * (issue #13, target ≥ 0.8), interleaved in short slices (REST, GraphQL,
 * GraphQL, REST...) so the machine's load cancels out. Reports, per pair, the
 * req/s ratio and the ratio of main-thread CPU per request (read from
 * /proc/self/task/<pid>/stat: autocannon runs in a worker thread).
 *
 *   createdb -h 127.0.0.1 -p 55432 -U postgres bench_gql
 *   DATABASE_URL=postgres://postgres@127.0.0.1:55432/bench_gql node --import tsx bench/graphql-vs-rest.ts [--pairs 6] [--slice 3] [--root /other/tree]
 *
 * `--root` runs another checkout's server (a before/after on the same machine
 * state); `--only graphql` loads GraphQL alone (for `node --cpu-prof`).
 * `--versus mcp` compares an MCP tool call instead (issue #33, target ≤ 1.3x):
 * `tools/call` of `events_list` with `limit: 100`, JSON-RPC over `POST /mcp`
 * in one session.
 * NODE_ENV is `production` unless set, as `npm start` runs the server.
 */
import './production-env.ts';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { BENCH_OPERATOR, benchEnv } from './tenant.ts';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const ROOT = resolve(flag('--root') ?? resolve(import.meta.dirname, '..'));
const PAIRS = Number(flag('--pairs') ?? 6);
const SLICE = Number(flag('--slice') ?? 3);
const ONLY = flag('--only');
const VERSUS = (flag('--versus') ?? 'graphql') as 'graphql' | 'mcp';
const OPERATOR = BENCH_OPERATOR;
const EVENTS_QUERY =
  'query Feed($first: Int) { events(first: $first) { edges { cursor node { id type seq subject { type id } data operation livemode createdAt } } pageInfo { hasNextPage endCursor } } }';

const { default: autocannon } = await import('autocannon');
const { buildApp } = await import(`${ROOT}/src/app.ts`);
const { loadConfig } = await import(`${ROOT}/src/config.ts`);
const { benchTenant } = await import(`${ROOT}/bench/tenant.ts`);
const { appendEvent } = await import(`${ROOT}/src/domain/event/event.ts`);

const ticks = () => {
  const f = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime, in 1/100 s
};

// This tree's benchmark environment (plain variables, so it serves a `--root` tree too): no request budget caps a side.
const config = loadConfig(benchEnv('memory://', process.env.DATABASE_URL ?? ''));
const app = await buildApp(config);
await app.start();
const origin = app.urls.api_origin;
const { created, secret } = await benchTenant(origin, OPERATOR, ['events:read']);
for (let i = 0; i < 300; i += 50) {
  await app.deps.db.transaction(async (tx: unknown) => {
    for (let j = 0; j < 50; j++) {
      await appendEvent(app.deps, tx, {
        test: true,
        organizationId: created.organization.id,
        type: 'assertion.created',
        subject: { type: 'entity', id: `ent_seed${i + j}` },
        data: { key: 'seed', value: i + j },
      });
    }
  });
}
await app.sequencer.flush();

const auth = { authorization: `Bearer ${secret}` };
const mcpHeaders = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const mcpInit = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
};
const session =
  VERSUS === 'mcp'
    ? (await fetch(`${origin}/mcp`, { method: 'POST', headers: mcpHeaders, body: JSON.stringify(mcpInit) })).headers.get('mcp-session-id')!
    : '';
const subjects = {
  rest: { url: `${origin}/v1/platform/events?limit=100`, method: 'GET', headers: auth },
  graphql: {
    url: `${origin}/graphql`,
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query: EVENTS_QUERY, variables: { first: 100 } }),
  },
  graphqlGet: {
    url: `${origin}/graphql?${new URLSearchParams({ query: EVENTS_QUERY, variables: JSON.stringify({ first: 100 }) })}`,
    method: 'GET',
    headers: { ...auth, accept: 'application/json' },
  },
  mcp: {
    url: `${origin}/mcp`,
    method: 'POST',
    headers: { ...mcpHeaders, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'events_list', arguments: { limit: 100 } } }),
  },
} as const;
/** What each round runs beside REST. */
const AGAINST = VERSUS === 'mcp' ? (['mcp'] as const) : (['graphql', 'graphqlGet'] as const);
type Against = (typeof AGAINST)[number];

async function slice(name: keyof typeof subjects, seconds: number) {
  const t0 = ticks();
  const r = await autocannon({ ...subjects[name], connections: 16, duration: seconds, workers: 1 } as never);
  const cpu = (ticks() - t0) * 10; // ms
  const ok = r.requests.total - r.non2xx;
  if (r.non2xx || r.errors) console.log(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: ok / seconds, cpuMsPerReq: cpu / Math.max(ok, 1) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  if (ONLY) {
    const r = await slice(ONLY as keyof typeof subjects, SLICE * PAIRS);
    console.log(ONLY, r);
  } else {
    await slice('rest', 1);
    for (const s of AGAINST) await slice(s, 1); // warm-up
    const rps = Object.fromEntries(AGAINST.map((s) => [s, [] as number[]])) as Record<Against, number[]>;
    const cpu = Object.fromEntries(AGAINST.map((s) => [s, [] as number[]])) as Record<Against, number[]>;
    const sides = ['rest', ...AGAINST] as const;
    for (let i = 0; i < PAIRS; i++) {
      // Each round runs every side once, rotated so that none always follows the same one.
      const round = [...sides.slice(i % sides.length), ...sides.slice(0, i % sides.length)];
      const out: Record<string, { rps: number; cpuMsPerReq: number }> = {};
      for (const s of round) out[s] = await slice(s, SLICE);
      for (const g of AGAINST) {
        rps[g].push(out[g]!.rps / out.rest!.rps);
        cpu[g].push(out.rest!.cpuMsPerReq / out[g]!.cpuMsPerReq);
      }
      console.log(
        `round ${i + 1}: ${Object.entries(out)
          .map(([k, v]) => `${k} ${v.rps.toFixed(0)} req/s ${v.cpuMsPerReq.toFixed(3)} ms CPU/req`)
          .join('; ')}`,
      );
    }
    const range = (xs: number[]) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}..${Math.max(...xs).toFixed(2)})`;
    console.log(
      `root ${ROOT} NODE_ENV=${process.env.NODE_ENV} GRAPHQL_DIRECT=${process.env.GRAPHQL_DIRECT ?? 'default'}: ` +
        AGAINST.map((g) => `${g}/REST req/s ${range(rps[g])}, by CPU per request ${range(cpu[g])}`).join('; ') +
        `; load ${(await import('node:os')).loadavg()[0]!.toFixed(1)}`,
    );
  }
} finally {
  await app.stop();
}
