import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../support/http.ts';
import { failedStart, serverProcesses, type ServerProcess, until } from '../support/ops-process.ts';
import { SseSubscription, waitUntil } from '../support/stream-client.ts';
import { buildTenant, onPostgres } from '../support/kit.ts';
import { toolValue } from '../mcp/helpers.ts';

/**
 * Every core of one machine (PLATFORM_API_PROCESSES, src/runtime/cluster.ts): a primary and N server processes on one
 * port, as real processes on PostgreSQL. Each request below goes on a connection of its own (`fresh`), which Node's
 * cluster hands to the processes in turn, so one client's requests are served by every process; the test proves
 * that with the sockets' owners (`ss`), then that the machine behaves as one server: one organization budget, an MCP
 * session and a live stream that span the processes, one aggregated scrape, a process that dies replaced, and one
 * SIGTERM draining them all.
 */
const START_MS = 120_000;

/** fetch on a new connection every time (`agent: false`), so the cluster's round robin spreads one client's requests. */
function fresh(url: string | URL, init: RequestInit = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const headers = new Headers(init.headers);
    const req = request(url, { method: init.method ?? 'GET', headers: Object.fromEntries(headers), agent: false }, (res) => {
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
      const empty = res.statusCode === 204 || res.statusCode === 304;
      resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream), { status: res.statusCode, headers: h }));
    });
    req.on('error', reject);
    init.signal?.addEventListener('abort', () => req.destroy(new Error('aborted')));
    if (init.body !== undefined && init.body !== null) req.end(init.body as string);
    else req.end();
  });
}

async function freshJson(origin: string, path: string, opts: { method?: string; token?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fresh(origin + path, {
    method: opts.method ?? 'GET',
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
  };
}

/** The pids holding the established server-side sockets of `port` (Linux `ss`). */
function socketOwners(port: number): Set<number> {
  const out = execFileSync('ss', ['-tnpH', 'state', 'established', `( sport = :${port} )`], { encoding: 'utf8' });
  return new Set([...out.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])));
}

const pidsOf = (c: ServerProcess) => /pids ([\d, ]+);/.exec(c.output())![1]!.split(', ').map(Number);

describe.skipIf(!onPostgres())('PLATFORM_API_PROCESSES: N server processes on one port (PostgreSQL only)', () => {
  const fleet = serverProcesses();
  const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
  const env = {
    PLATFORM_API_PROCESSES: '2',
    HOST: '127.0.0.1',
    PORT: '0',
    OPERATOR_TOKEN: operatorToken,
    BOOTSTRAP: '0',
    LOG_LEVEL: 'info',
    // One organization budget of 60 that barely refills during the test: each process alone would admit 60. Leases
    // (a process spends a share lent by the primary without asking) are 3 tokens at most here (1/20 of the burst).
    ORGANIZATION_RATE_LIMIT_BURST: '60',
    ORGANIZATION_RATE_LIMIT_PER_SECOND: '0.01',
    GRAPHQL_MAX_COST: '10',
  };
  let cluster: ServerProcess;
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    await Promise.all(closers.map((c) => c().catch(() => {})));
  });

  it(
    'starts N processes behind one port, lists them in the banner, and spreads one client over them',
    async () => {
      cluster = await fleet.spawn(env, START_MS);
      expect(cluster.output()).toMatch(/PostgreSQL; NODE_ENV=production; 2 processes\)/);
      expect(cluster.output()).toMatch(/Processes\s+2 on one port \(pids \d+, \d+; primary \d+\)/);
      const pids = pidsOf(cluster);
      expect(pids).toHaveLength(2);
      expect(pids).not.toContain(cluster.child.pid);

      // Four open connections: the round robin gives two to each process.
      const port = Number(new URL(cluster.origin).port);
      const held = await Promise.all(
        [1, 2, 3, 4].map(
          () =>
            new Promise<import('node:http').ClientRequest>((resolve) => {
              const req = request(`${cluster.origin}/healthz`, { agent: false, headers: { connection: 'keep-alive' } });
              req.on('socket', (s) => s.once('connect', () => resolve(req)));
              req.on('error', () => {});
              req.flushHeaders();
            }),
        ),
      );
      await until('both processes to own a connection', 10_000, async () =>
        pids.every((p) => socketOwners(port).has(p)) ? true : undefined,
      );
      for (const r of held) r.destroy();
    },
    START_MS + 30_000,
  );

  it('one organization budget for the machine: the processes together admit the budget once, less at most a lease each', async () => {
    const { token } = await buildTenant({ http: new HttpClient(cluster.origin), operatorToken }, ['events:read']);
    const statuses: number[] = [];
    for (let i = 0; i < 80; i++) statuses.push((await freshJson(cluster.origin, '/v1/platform/events?limit=1', { token })).status);
    const admitted = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(admitted).toBeLessThanOrEqual(60);
    expect(admitted).toBeGreaterThanOrEqual(60 - 2 * 3);
    // Whatever a process still holds is spent or handed back: then every request is refused, as by one process.
    let refused = await freshJson(cluster.origin, '/v1/platform/events?limit=1', { token });
    for (let i = 0; i < 20 && refused.status === 200; i++)
      refused = await freshJson(cluster.origin, '/v1/platform/events?limit=1', { token });
    expect([refused.status, refused.body.error.code, refused.headers.get('ratelimit-remaining')]).toEqual([429, 'rate_limited', '0']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('an MCP session and a live stream span the processes; a scrape answers for all of them', async () => {
    const { token, org } = await buildTenant({ http: new HttpClient(cluster.origin), operatorToken }, ['events:read', 'webhooks:write']);
    const mcp = new Client({ name: 'cluster-agent', version: '1' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', cluster.origin), {
        fetch: fresh,
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    closers.push(() => mcp.close());
    // Each call on its own connection: half land on the process that did not open the session, which reads it from the database.
    for (let i = 0; i < 4; i++) {
      const created = toolValue(await mcp.callTool({ name: 'webhook_endpoints_create', arguments: { url: `https://a.example/h${i}` } }));
      expect(created.id).toMatch(/^we_/);
    }

    const sse = new SseSubscription(cluster.origin, token, { startingAfter: '0' });
    closers.push(() => sse.close());
    const appended: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await freshJson(cluster.origin, '/operator/events', {
        method: 'POST',
        token: operatorToken,
        body: { organization_id: org.id, type: 'payout.created', subject: { type: 'payout', id: `po_${i}` }, data: { i } },
      });
      expect(res.status, res.text).toBe(201);
      appended.push(res.body.id);
    }
    await waitUntil(() => appended.every((id) => sse.events.some((e) => e.id === id)), 'every appended event on the SSE stream', 30_000);
    const seqs = sse.events.filter((e) => appended.includes(e.id)).map((e) => Number(e.seq));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));

    // The counter of answered requests, summed over the processes: every request of this test so far, on either.
    const scrape = async () => {
      const text = (await freshJson(cluster.origin, '/metrics', { token: operatorToken })).text;
      return Number(/^platform_http_requests_total\{method="POST",route="\/operator\/events",status="201"\} (\d+)$/m.exec(text)?.[1]);
    };
    expect(await scrape()).toBe(4);
    expect(await scrape()).toBe(4);
  });

  it(
    'a process that dies is replaced while the other serves',
    async () => {
      const [victim] = pidsOf(cluster);
      process.kill(victim!, 'SIGKILL');
      // Once the primary has seen it die (a connection handed to it in the instant before is lost with it, as with any
      // crash), every request is answered by the survivor until the replacement listens.
      await until('the primary to see the death', 30_000, async () => (/a server process died/.test(cluster.output()) ? true : undefined));
      for (let i = 0; i < 6; i++) expect((await freshJson(cluster.origin, '/healthz')).status).toBe(200);
      await until('the replacement to start', START_MS, async () => (/server process restarted/.test(cluster.output()) ? true : undefined));
    },
    START_MS + 30_000,
  );

  it('SIGTERM to the primary drains every process and exits 0', async () => {
    const port = Number(new URL(cluster.origin).port);
    const stopped = await cluster.stop('SIGTERM', 30_000);
    expect(stopped.code).toBe(0);
    expect(socketOwners(port).size).toBe(0);
    for (const pid of pidsOf(cluster)) expect(() => process.kill(pid, 0)).toThrow();
  });

  it('refuses at start a process count whose connections exceed the budget, and N processes on the embedded database', async () => {
    const over = await failedStart({ ...env, DATABASE_URL: fleet.database!.databaseUrl!, DATABASE_CONNECTION_BUDGET: '20' });
    expect(over.code).toBe(1);
    expect(over.stderr.trim()).toMatch(
      /^Invalid configuration:\n {2}PLATFORM_API_PROCESSES: 2 processes × 14 PostgreSQL connections \(DATABASE_POOL_SIZE 10 \+ listeners and migrations\) = 28, over the budget of 20 \(DATABASE_CONNECTION_BUDGET\); lower PLATFORM_API_PROCESSES or DATABASE_POOL_SIZE, or raise the budget$/,
    );
    const embedded = await failedStart({ PLATFORM_API_PROCESSES: '2', DATA_DIR: 'memory://', PORT: '0' });
    expect(embedded.code).toBe(1);
    expect(embedded.stderr).toMatch(/PLATFORM_API_PROCESSES: 2 needs DATABASE_URL \(PostgreSQL\)/);
  });
});
