import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { HttpClient } from '../support/http.ts';
import { spawnServer, type ServerProcess } from '../support/ops-process.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { buildTenant, onPostgres, type Server } from '../support/kit.ts';

/**
 * Real server processes (bin/platform-server.mjs, what `npm start` runs) on
 * one PostgreSQL database. PGlite is one process's embedded database, so these
 * run only with TEST_DATABASE_URL. A worker killed mid-delivery is in the
 * chaos suite (test/hardening/chaos.test.ts), with the count of lost and
 * duplicated deliveries.
 */
function kill9(c: ServerProcess): Promise<unknown> {
  const exited = new Promise((r) => (c.child.exitCode !== null || c.child.signalCode !== null ? r(null) : c.child.once('exit', r)));
  c.child.kill('SIGKILL');
  return exited;
}

describe.skipIf(!onPostgres())('webhook workers as separate processes on one PostgreSQL', () => {
  let db: TestDatabase;
  let rx: Receiver;
  const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
  const children: ServerProcess[] = [];
  const env = () => ({
    DATABASE_URL: db.databaseUrl!,
    PORT: '0',
    OPERATOR_TOKEN: operatorToken,
    BOOTSTRAP: '0',
    LOG_LEVEL: 'warn',
    WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s,1s,1s,1s',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_LEASE_MS: '3000',
    WEBHOOK_POLL_MS: '100',
    WEBHOOK_ENDPOINT_CONCURRENCY: '2',
    // The receiver is on 127.0.0.1 and the servers run on PostgreSQL, where loopback delivery is off by default.
    WEBHOOK_ALLOW_LOOPBACK: '1',
  });
  const spawn = async () => {
    const c = await spawnServer(env());
    children.push(c);
    return c;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    rx = await startReceiver();
  });
  afterAll(async () => {
    await Promise.all(children.map(kill9));
    await rx?.close();
    await db?.drop();
  });

  /** An organization with `n` endpoints on the receiver (paths /p<run>/<i>), each answering after `delayMs`. */
  async function setup(origin: string, run: string, n: number, delayMs: number) {
    const t: Server = { http: new HttpClient(origin), operatorToken };
    const { org, token } = await buildTenant(t, ['webhooks:write']);
    for (let i = 0; i < n; i++) {
      const path = `/${run}/${i}`;
      rx.on(path, (_req, res) => setTimeout(() => res.end('ok'), delayMs));
      const res = await t.http.post('/v1/platform/webhook_endpoints', { url: rx.url(path) }, { token });
      expect(res.status, res.text).toBe(201);
    }
    const emit = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const res = await t.http.post(
          '/operator/events',
          { organization_id: org.id, type: 'assertion.created', subject: { type: 'entity', id: `ent_${i}` }, data: {} },
          { token: operatorToken },
        );
        expect(res.status, res.text).toBe(201);
      }
    };
    return { emit };
  }

  const keysOf = (run: string) =>
    rx.received.filter((r) => r.path.startsWith(`/${run}/`)).map((r) => `${r.path} ${r.headers['webhook-id']}`);

  it('several worker processes never send the same delivery twice at the same time', { timeout: 150_000 }, async () => {
    const procs = [await spawn(), await spawn()]; // one at a time: each applies migrations at start
    const inFlight = new Map<string, number>();
    let overlap = 0;
    const { emit } = await setup(procs[0]!.origin, 'multi', 5, 0);
    for (let i = 0; i < 5; i++) {
      rx.on(`/multi/${i}`, (req, res) => {
        const key = `${req.url} ${req.headers['webhook-id']}`;
        const n = (inFlight.get(key) ?? 0) + 1;
        inFlight.set(key, n);
        if (n > 1) overlap++;
        setTimeout(() => {
          inFlight.set(key, inFlight.get(key)! - 1);
          res.end('ok');
        }, 30);
      });
    }
    await emit(100);
    const until = Date.now() + 45_000;
    while (new Set(keysOf('multi')).size < 500 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 500));
    const keys = keysOf('multi');
    expect(new Set(keys).size).toBe(500);
    expect(overlap).toBe(0);
    expect(keys.length).toBe(500); // and with no crash, not even sequentially twice
  });
});
