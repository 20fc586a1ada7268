import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, onPostgres, seedDataDir, type TestDatabase } from '../support/database.ts';
import { spawnServer, type ServerProcess } from '../support/ops-process.ts';

/**
 * Finding 1 of issue 31: 400 concurrent GraphiQL page loads took a fresh process from 223 MB to 2,042 MB RSS, never
 * given back, and /healthz to 6.8 s. With the page a shell and its files shared, compressed Buffers, the same load
 * (the shell and every file it names, as a browser fetches them) grows the server's RSS by under 100 MB and /healthz
 * stays within a generous ratio of its idle latency. The per-address bucket is off here (PUBLIC_RATE_LIMIT_PER_SECOND
 * 0): the page itself must hold, not the limit. Loads come from 20 loopback addresses so no per-address share can
 * refuse them. A real server process, so its RSS is its own.
 */
const LOADS = 400;
const ADDRESSES = Array.from({ length: 20 }, (_, i) => `127.0.0.${i + 2}`);

let server: ServerProcess | undefined;
let database: TestDatabase | undefined;
const dir = mkdtempSync(join(tmpdir(), 'page-load-'));
afterAll(async () => {
  await server?.stop('SIGTERM', 15_000);
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const rssBytes = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/** A GET as a browser sends it (br accepted); resolves with the status and the body's length as sent. */
function get(
  origin: string,
  path: string,
  headers: Record<string, string>,
  agent: Agent,
): Promise<{ status: number; bytes: number; body: string }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    request({ host: hostname, port, path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode!, bytes: body.length, body: res.headers['content-encoding'] ? '' : body.toString() });
      });
    })
      .on('error', reject)
      .end();
  });
}

async function healthzMs(origin: string, agent: Agent): Promise<number> {
  const started = performance.now();
  const res = await get(origin, '/healthz', {}, agent);
  expect(res.status).toBe(200);
  return performance.now() - started;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// The page and its assets do not touch the database: the PGlite pass proves it.
describe.skipIf(process.platform !== 'linux' || onPostgres())('GraphiQL under 400 concurrent page loads', () => {
  it('grows the server’s RSS by under 100 MB and keeps /healthz within a generous ratio of its idle latency', {
    timeout: 300_000,
  }, async () => {
    // A directory seeded from the migrated template: the server starts without creating a database (seconds of CPU).
    database = await createTestDatabase();
    await seedDataDir(database, join(dir, 'data'));
    server = await spawnServer(
      {
        DATA_DIR: join(dir, 'data'),
        PORT: '0',
        BOOTSTRAP: 'false',
        LOG_LEVEL: 'warn',
        PUBLIC_RATE_LIMIT_PER_SECOND: '0',
      },
      150_000,
    );
    const pid = server.child.pid!;
    const probe = new Agent({ keepAlive: true, maxSockets: 1 });
    const idle: number[] = [];
    for (let i = 0; i < 20; i++) idle.push(await healthzMs(server.origin, probe));
    // The first page load builds the files once per process (read from the GraphiQL package in a child process,
    // compressed once): a fixed cost, not what concurrency amplifies, so it is paid before the baseline.
    const html = { accept: 'text/html', 'accept-encoding': 'gzip, deflate, br' };
    const warm = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await get(server.origin, '/graphql', { ...html, 'accept-encoding': 'identity' }, warm);
    for (const m of first.body.matchAll(/(?:src|href)="([^"]+)"/g)) await get(server.origin, m[1]!, html, warm);
    warm.destroy();
    const before = rssBytes(pid);

    // One browser per load: its own connections (two: 800 in all, under the plain budget of 1,000 and 40 per address,
    // under any address's share), the shell, then every file it names.
    let peak = before;
    const during: number[] = [];
    let loading = true;
    const prober = (async () => {
      while (loading) {
        during.push(await healthzMs(server!.origin, probe));
        peak = Math.max(peak, rssBytes(pid));
      }
    })();
    const loads = Array.from({ length: LOADS }, async (_, i) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 2, localAddress: ADDRESSES[i % ADDRESSES.length] });
      try {
        const shell = await get(server!.origin, '/graphql', { ...html, 'accept-encoding': 'identity' }, agent);
        expect(shell.status).toBe(200);
        expect(shell.bytes).toBeLessThan(4096);
        const files = [...shell.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
        expect(files.length).toBeGreaterThanOrEqual(3);
        const answers = await Promise.all(files.map((f) => get(server!.origin, f, { 'accept-encoding': 'gzip, deflate, br' }, agent)));
        for (const a of answers) expect(a.status).toBe(200);
        return answers.reduce((n, a) => n + a.bytes, shell.bytes);
      } finally {
        agent.destroy();
      }
    });
    const sent = await Promise.all(loads);
    loading = false;
    await prober;
    peak = Math.max(peak, rssBytes(pid));
    probe.destroy();

    const grewMb = (peak - before) / 1e6;
    console.log(
      `page loads: ${LOADS}, ${Math.round(sent.reduce((a, b) => a + b, 0) / 1e6)} MB sent; RSS ${Math.round(before / 1e6)} → peak ${Math.round(peak / 1e6)} MB; /healthz idle p50 ${median(idle).toFixed(1)} ms, under load p50 ${median(during).toFixed(1)} ms max ${Math.max(...during).toFixed(1)} ms (${during.length} probes)`,
    );
    expect(grewMb).toBeLessThan(100);
    // Generous: a loaded 2-core machine shares its cores with the loads themselves.
    expect(median(during)).toBeLessThan(Math.max(median(idle), 10) * 100);
  });
});
