import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/brokers.ts';
import { HttpClient } from '../support/http.ts';
import { spawnServer, type ServerProcess } from '../support/ops-process.ts';
import { startReceiver, type Receiver } from '../webhook/receiver.ts';
import { buildTenant, onPostgres, type Server } from '../support/kit.ts';

/**
 * Chaos: real server processes (as `npm start` runs them) over a PostgreSQL
 * cluster this file starts for itself (.ci/pg-throwaway, on a random port, so
 * restarting it disturbs nobody), killed with SIGKILL mid-delivery and
 * mid-operations, and the cluster restarted (immediate mode, like a crash)
 * under load.
 *
 * Jepsen-style accounting: a write the API acknowledged (201 with an event id,
 * 202 with an operation) is a fact; a write that failed or got no answer is
 * indeterminate (it may have committed). Every acknowledged event must reach
 * every endpoint (lost = acknowledged − received, must be 0); deliveries are
 * at least once, so duplicates are counted and reported, not refused; every
 * acknowledged operation must settle (stuck must be 0).
 */
const execFileAsync = promisify(execFile);
const PG_THROWAWAY = resolve(import.meta.dirname, '../../.ci/pg-throwaway');
const TERMINAL = ['succeeded', 'partial', 'failed', 'canceled'];

interface Ledger {
  /** Acknowledged event ids. */
  events: string[];
  /** Writes whose outcome the client cannot know (an error or no answer). */
  indeterminate: number;
  /** How those failed: `<status> <code>`, or `no answer`. */
  failures: Record<string, number>;
  /** Acknowledged operation ids. */
  operations: string[];
}

describe.skipIf(!onPostgres())(
  'chaos (PostgreSQL only: several processes share one database and the test restarts its own cluster; embedded PGlite is one process)',
  () => {
    const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
    const children: ServerProcess[] = [];
    let pgRoot: string;
    let pgDir: string;
    let databaseUrl: string;
    let rx: Receiver;

    beforeAll(async () => {
      pgRoot = mkdtempSync('/tmp/chaos-pg-');
      chmodSync(pgRoot, 0o755); // initdb runs as the postgres user
      pgDir = join(pgRoot, 'data');
      // A port the kernel just found free: a random one in 20000-39999 overlaps the ephemeral range, where a client
      // socket of the run may hold it (one CI run's cluster did not start; its log was gone with its directory).
      const port = await freePort();
      databaseUrl = (await execFileAsync(PG_THROWAWAY, ['start', pgDir, String(port)])).stdout.trim();
      rx = await startReceiver();
    }, 60_000);
    afterAll(async () => {
      await Promise.all(children.map((c) => c.stop('SIGKILL')));
      await rx?.close();
      if (pgDir) await execFileAsync(PG_THROWAWAY, ['stop', pgDir]).catch(() => {});
      if (pgRoot) rmSync(pgRoot, { recursive: true, force: true });
    });

    const spawn = async () => {
      const c = await spawnServer({
        DATABASE_URL: databaseUrl,
        PORT: '0',
        OPERATOR_TOKEN: operatorToken,
        BOOTSTRAP: '0',
        // Errors only: a failed expectation below shows what the server logged as an error.
        LOG_LEVEL: 'error',
        WEBHOOK_ALLOW_LOOPBACK: '1',
        WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s,1s,1s,1s,1s,1s',
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_LEASE_MS: '3000',
        WEBHOOK_POLL_MS: '100',
        WEBHOOK_ENDPOINT_CONCURRENCY: '2',
        OPERATION_LEASE_MS: '2000',
        OPERATIONS_POLL_MS: '100',
        OPERATION_RETRY_BASE_MS: '200',
      });
      children.push(c);
      return { proc: c, t: { http: new HttpClient(c.origin), operatorToken } };
    };

    /** An organization with `n` endpoints on the receiver (paths /<run>/<i>, answering after `delayMs`) and a token for launches. */
    async function tenant(t: Server, run: string, n: number, delayMs: number) {
      const { org, token } = await buildTenant(t, ['webhooks:write', 'distributions:read', 'distributions:write', 'distributions:launch']);
      const paths: string[] = [];
      for (let i = 0; i < n; i++) {
        const path = `/${run}/${i}`;
        rx.on(path, (_req, res) => setTimeout(() => res.end('ok'), delayMs));
        const res = await t.http.post('/v1/platform/webhook_endpoints', { url: rx.url(path) }, { token });
        expect(res.status, res.text).toBe(201);
        paths.push(path);
      }
      return { org, token, paths };
    }

    /** Appends one event through the operator route; records it as acknowledged or indeterminate. */
    async function append(t: Server, orgId: string, ledger: Ledger): Promise<void> {
      const res = await t.http
        .post(
          '/operator/events',
          { organization_id: orgId, type: 'assertion.created', subject: { type: 'entity', id: `ent_${ledger.events.length}` }, data: {} },
          { token: operatorToken },
        )
        .catch(() => undefined);
      if (res?.status === 201) ledger.events.push(res.body.id);
      else failed(ledger, res);
    }

    async function launch(t: Server, token: string, ledger: Ledger, delayMs: number): Promise<void> {
      const deployments = [0, 1].map(() => ({ provider: 'sandbox', config: { delay_ms: delayMs } }));
      const res = await t.http
        .post(
          '/v1/platform/distributions',
          { name: 'Chaos', budget: 0, deployments },
          { token, headers: { 'idempotency-key': randomUUID() } },
        )
        .catch(() => undefined);
      if (res?.status === 202) ledger.operations.push(res.body.operation.id);
      else failed(ledger, res);
    }

    function failed(ledger: Ledger, res: { status: number; body: any } | undefined) {
      ledger.indeterminate++;
      const how = res ? `${res.status} ${res.body?.error?.code ?? res.body?.error}` : 'no answer';
      ledger.failures[how] = (ledger.failures[how] ?? 0) + 1;
    }

    /** The receiver's side of the count: acknowledged events received per endpoint, missing ones, and repeats (of any event). */
    function count(ledger: Ledger, paths: string[]) {
      const byPath = new Map(paths.map((p) => [p, new Map<string, number>()]));
      for (const r of rx.received) {
        const seen = byPath.get(r.path);
        if (seen) seen.set(String(r.headers['webhook-id']), (seen.get(String(r.headers['webhook-id'])) ?? 0) + 1);
      }
      let received = 0;
      let duplicates = 0;
      for (const seen of byPath.values()) {
        for (const id of ledger.events) if (seen.has(id)) received++;
        for (const n of seen.values()) duplicates += n - 1;
      }
      return { expected: ledger.events.length * paths.length, received, lost: ledger.events.length * paths.length - received, duplicates };
    }

    async function stuck(t: Server, token: string, ledger: Ledger): Promise<string[]> {
      const live: string[] = [];
      for (const id of ledger.operations) {
        const res = await t.http.get(`/v1/platform/operations/${id}`, { token }).catch(() => undefined);
        if (!TERMINAL.includes(res?.body?.operation?.status)) live.push(`${id}:${res?.body?.operation?.status ?? res?.status}`);
      }
      return live;
    }

    /** Waits (bounded) until nothing acknowledged is missing or live, then reports the count. */
    async function settle(what: string, t: Server, token: string, ledger: Ledger, paths: string[], ms: number) {
      const deadline = Date.now() + ms;
      let live = await stuck(t, token, ledger);
      while ((count(ledger, paths).lost > 0 || live.length > 0) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        live = await stuck(t, token, ledger);
      }
      const c = count(ledger, paths);
      const report = {
        events_acknowledged: ledger.events.length,
        writes_indeterminate: ledger.indeterminate,
        failures: ledger.failures,
        deliveries_expected: c.expected,
        deliveries_received: c.received,
        lost: c.lost,
        duplicates: c.duplicates,
        operations_launched: ledger.operations.length,
        operations_stuck: live.length,
      };
      console.log(`chaos, ${what}: ${JSON.stringify(report)}`);
      return { ...report, live };
    }

    let survivor: Awaited<ReturnType<typeof spawn>>;

    it('kill -9 of the server mid-delivery and mid-operations: a new process delivers every acknowledged event and settles every operation', {
      timeout: 90_000,
    }, async () => {
      const a = await spawn();
      const { org, token, paths } = await tenant(a.t, 'kill', 10, 50);
      const ledger: Ledger = { events: [], indeterminate: 0, failures: {}, operations: [] };
      for (let i = 0; i < 6; i++) await launch(a.t, token, ledger, 1500);
      for (let i = 0; i < 100; i++) await append(a.t, org.id, ledger);
      expect(ledger.indeterminate).toBe(0);
      await rx.waitFor(150, undefined, 20_000);
      await a.proc.stop('SIGKILL');
      const atKill = count(ledger, paths);
      expect(atKill.received).toBeLessThan(atKill.expected); // killed mid-run

      survivor = await spawn(); // picks up the delivery cursor, and the dead process's leases once they expire
      const r = await settle('kill -9', survivor.t, token, ledger, paths, 45_000);
      expect(r.live).toEqual([]);
      expect(r.lost).toBe(0);
    });

    it('a PostgreSQL restart under load loses no acknowledged event and leaves no operation stuck', { timeout: 90_000 }, async () => {
      const { t } = survivor;
      const { org, token, paths } = await tenant(t, 'restart', 5, 10);
      const ledger: Ledger = { events: [], indeterminate: 0, failures: {}, operations: [] };
      for (let i = 0; i < 4; i++) await launch(t, token, ledger, 1000);

      // A steady writer for a few seconds; the cluster goes down (immediately, as in a crash) and back up meanwhile.
      const writing = (async () => {
        const until = Date.now() + 6000;
        while (Date.now() < until) await append(t, org.id, ledger);
      })();
      await new Promise((r) => setTimeout(r, 1500));
      await execFileAsync(PG_THROWAWAY, ['restart', pgDir]);
      await writing;
      expect(ledger.events.length).toBeGreaterThan(0);

      const r = await settle('PostgreSQL restart', t, token, ledger, paths, 45_000);
      const lastLogs = () =>
        survivor.proc
          .output()
          .split('\n')
          .slice(-12)
          .map((l) => l.slice(0, 400))
          .join('\n');
      expect(r.live, lastLogs()).toEqual([]);
      expect(r.lost, lastLogs()).toBe(0);
      // While the database is away a write is refused as retryable (503 with Retry-After), never a 500.
      const serverErrors = () =>
        survivor.proc
          .output()
          .split('\n')
          .filter((l) => l.includes('"level":50') && l.includes('unhandled'))
          .slice(0, 3)
          .join('\n');
      expect(
        Object.keys(ledger.failures).filter((how) => how !== '503 service_unavailable' && how !== 'no answer'),
        serverErrors(),
      ).toEqual([]);
      expect((await t.http.get('/readyz')).status).toBe(200);
    });
  },
);
