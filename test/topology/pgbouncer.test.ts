import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'graphql-ws';
import { freePort } from '../support/brokers.ts';
import { adminQuery } from '../support/global-setup.ts';
import { buildTenant, onPostgres, type RunningApp, startAppOn, type TestApp } from '../support/kit.ts';
import { feedEvents } from '../support/events.ts';
import { failedStart } from '../support/ops-process.ts';
import { subscribeLive, waitUntil, wsClient } from '../support/stream-client.ts';
import { api, activeEnrollment, ALL_SCOPES as ASSERTION_SCOPES, expectStatus } from '../assertion/helpers.ts';
import { ALL_SCOPES as OPERATION_SCOPES, launch, op, operationsConfig, sandbox, topUp } from '../operation/helpers.ts';
import { startReceiver, webhookConfig, type Receiver } from '../webhook/receiver.ts';

/**
 * The product behind PgBouncer 1.18 in transaction pooling mode (docs/operating/pgbouncer.md): two server
 * processes whose pools reach PostgreSQL through the pooler, their LISTEN connections and migrations directly, run
 * a workload through the fronts (assertions, the feed, webhook deliveries, an operation, a live subscription on the
 * other process). Then PostgreSQL's statement log shows what reached it through the pooler: no named prepared
 * statement, no session advisory lock, no LISTEN, no session setting.
 *
 * The file starts a cluster of its own (.ci/pg-throwaway) because it turns on `log_statement = all` and reads the
 * log, which the run's shared cluster is not the test's to do; PgBouncer (.ci/pgbouncer) reaches it over its Unix
 * socket and the servers' direct URL over TCP, so the log's remote column (`[local]` or an address) tells the
 * pooler's backends from the direct ones without sampling anything.
 */
const execFileAsync = promisify(execFile);
const CI = resolve(import.meta.dirname, '../../.ci');

/** One entry of the statement log: the backend, where it came from, and its message (continuation lines joined). */
interface LogEntry {
  pid: string;
  remote: string;
  database: string;
  level: string;
  message: string;
}

const PREFIX = '%m [%p] %r %d: ';
const ENTRY = /^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[(\d+)\] (\S+) (\S*): ([A-Z]+):\s+(.*)$/;

function readLog(file: string): LogEntry[] {
  const entries: LogEntry[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = ENTRY.exec(line);
    if (m) entries.push({ pid: m[1]!, remote: m[2]!, database: m[3]!, level: m[4]!, message: m[5]! });
    else if (entries.length) entries.at(-1)!.message += `\n${line}`;
  }
  return entries;
}

/** What a statement log entry ran: `statement: <sql>` (simple protocol) or `execute <name>: <sql>` (extended). */
const executed = (e: LogEntry) => /^(statement|execute [^:]+): /.test(e.message);

it('a pool declared transaction-pooled without a direct URL stops the start with one line naming both settings', async () => {
  // Nothing listens at the URL: the configuration is refused before the server loads or connects.
  const failed = await failedStart({ DATABASE_URL: 'postgres://app@127.0.0.1:1/platform', DATABASE_POOL_MODE: 'transaction' });
  expect(failed.code).toBe(1);
  expect(failed.stderr).toBe(
    "Invalid configuration:\n  DATABASE_POOL_MODE: 'transaction' needs DATABASE_DIRECT_URL (PostgreSQL itself, not the pooler) for LISTEN and migrations\n",
  );
  expect(failed.stdout).toBe('');
});

describe.skipIf(!onPostgres())('behind PgBouncer in transaction mode (PostgreSQL only: PgBouncer fronts a PostgreSQL cluster)', () => {
  const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
  let root: string;
  let pgDir: string;
  let bouncerDir: string;
  let bouncerAdmin: string;
  let a: RunningApp;
  let b: RunningApp;
  let rx: Receiver;
  const clients: Client[] = [];

  beforeAll(async () => {
    root = mkdtempSync('/tmp/pgbouncer-topology-');
    chmodSync(root, 0o755); // initdb and PgBouncer run as the postgres user
    pgDir = join(root, 'pg');
    bouncerDir = join(root, 'bouncer');
    // Ports the kernel just found free (a random pick could collide with a client socket's ephemeral port).
    const pgPort = await freePort();
    const bouncerPort = await freePort();
    const admin = (await execFileAsync(join(CI, 'pg-throwaway'), ['start', pgDir, String(pgPort)])).stdout.trim();
    for (const setting of [`log_statement = 'all'`, `log_line_prefix = '${PREFIX}'`])
      await adminQuery(admin, `ALTER SYSTEM SET ${setting}`);
    await adminQuery(admin, 'SELECT pg_reload_conf()');
    await adminQuery(admin, 'CREATE DATABASE platform');
    // pg-throwaway's socket directory is /tmp: the pooler's server connections are `[local]` in the log.
    const pooler = (
      await execFileAsync(join(CI, 'pgbouncer'), ['start', bouncerDir, String(bouncerPort), '/tmp', String(pgPort)])
    ).stdout.trim();
    bouncerAdmin = pooler.replace(/\/postgres$/, '/pgbouncer');
    const database = {
      databaseUrl: admin.replace(/\/postgres$/, '/platform'),
      poolerUrl: pooler.replace(/\/postgres$/, '/platform'),
      dataDir: 'memory://',
      drop: async () => {},
    };
    rx = await startReceiver();
    // A migrates the empty database (through the direct URL), delivers webhooks and runs operations when the test
    // drains them (neither process's operations worker runs on its own); B's backstop poll is off
    // (once an hour), so its live subscriber can only hear of A's events by LISTEN/NOTIFY.
    a = await startAppOn(database, { operatorToken, ...webhookConfig(), ...operationsConfig() });
    b = await startAppOn(database, {
      operatorToken,
      eventStreamPollMs: 3_600_000,
      webhook: { ...webhookConfig().webhook, worker: false },
      ...operationsConfig(),
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await b?.stop();
    await a?.stop();
    await rx?.close();
    if (bouncerDir) await execFileAsync(join(CI, 'pgbouncer'), ['stop', bouncerDir]).catch(() => {});
    if (pgDir) await execFileAsync(join(CI, 'pg-throwaway'), ['stop', pgDir]).catch(() => {});
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('serves assertions, the feed, webhook deliveries, an operation and a live subscription, and reaches PostgreSQL through the pooler with unnamed statements only', async () => {
    const A = { ...a, operatorToken } as unknown as TestApp;
    const { org, token } = await buildTenant(A, [
      ...new Set([...ASSERTION_SCOPES, ...OPERATION_SCOPES, 'webhooks:read', 'webhooks:write']),
    ]);
    const endpoint = await a.http.post('/v1/platform/webhook_endpoints', { url: rx.url('/hooks') }, { token });
    expect(endpoint.status, endpoint.text).toBe(201);
    const ws = wsClient({ origin: b.origin }, `Bearer ${token}`);
    clients.push(ws);
    const live = await subscribeLive({ app: b.app }, ws);

    // Assertions: an enrollment moved to active, then claims that qualify it and change again.
    const assertions = api(A, token);
    const { entity } = await activeEnrollment(assertions);
    for (const [key, value] of [
      ['verified', true],
      ['score', 7],
      ['verified', false],
    ] as const)
      expectStatus(await assertions.assert({ entity, key, value }), 201);
    // An operation: a launch, run by A's engine.
    const who = { token, brand: org.brands[0]!.id, orgId: org.id };
    await topUp(A, who.brand, 10_000);
    const { operation } = await launch(A, who, { budget: 1000, deployments: [sandbox({ spend: 100 })] });
    await a.app.operations.drain();
    expect((await op(A, who, operation.id)).status).toBe('succeeded');

    // The feed holds every event; the subscriber on B saw each of them, and the receiver got each once at least.
    await a.app.sequencer.flush();
    const feed = (await feedEvents(A, token)).map((e) => e.id as string);
    expect(feed.length).toBeGreaterThanOrEqual(8);
    await live.waitForCount(feed.length);
    expect(live.events.map((e) => e.id).sort()).toEqual([...feed].sort());
    await waitUntil(
      () => feed.every((id) => rx.for('/hooks').some((r) => JSON.parse(r.body).id === id)),
      () => `deliveries of ${feed.length} events, ${rx.for('/hooks').length} received`,
      30_000,
    );

    // PgBouncer carried the pools: transactions on the database, its clients the two servers' pool connections.
    const stats = await bouncer('SHOW STATS');
    expect(Number(stats.find((s) => s.database === 'platform')?.total_xact_count)).toBeGreaterThan(50);
    expect((await bouncer('SHOW CLIENTS')).filter((c) => c.database === 'platform').length).toBeGreaterThan(1);
    expect(readFileSync(join(bouncerDir, 'pgbouncer.log'), 'utf8')).not.toMatch(/ (WARNING|ERROR) /);

    // PostgreSQL's view: every entry of the pooler's backends ([local]) against the direct ones (TCP).
    const log = readLog(join(pgDir, 'server.log')).filter((e) => e.database === 'platform');
    const pooled = log.filter((e) => e.remote === '[local]');
    const direct = log.filter((e) => e.remote !== '[local]');
    const ran = pooled.filter(executed);
    // The log holds the pool's work (the sequencer's transaction-scoped lock among it) and the direct LISTENs.
    expect(ran.some((e) => /^execute <unnamed>: .*pg_advisory_xact_lock/s.test(e.message))).toBe(true);
    expect(direct.filter(executed).some((e) => /^statement: LISTEN /.test(e.message))).toBe(true);
    // No named prepared statement, session advisory lock, LISTEN or session setting came through the pooler.
    expect(ran.filter((e) => /^execute (?!<unnamed>:)/.test(e.message)).map((e) => e.message)).toEqual([]);
    expect(ran.filter((e) => /\bpg_(try_)?advisory_lock(_shared)?\s*\(/i.test(e.message)).map((e) => e.message)).toEqual([]);
    expect(ran.filter((e) => /:\s*(LISTEN|UNLISTEN|PREPARE|DEALLOCATE)\b/i.test(e.message)).map((e) => e.message)).toEqual([]);
    expect(ran.filter((e) => /:\s*SET\s+(?!LOCAL\b|TRANSACTION\b)/i.test(e.message)).map((e) => e.message)).toEqual([]);
    expect(ran.filter((e) => /set_config\([^)]*,\s*false\s*\)/i.test(e.message)).map((e) => e.message)).toEqual([]);
    // And nothing failed for want of one (a statement prepared on another backend).
    expect(pooled.filter((e) => e.level === 'ERROR' && /prepared statement/.test(e.message))).toEqual([]);
  });

  /** A PgBouncer admin console command's rows. */
  async function bouncer(command: string): Promise<Record<string, string>[]> {
    const c = new pg.Client({ connectionString: bouncerAdmin });
    await c.connect();
    try {
      // The console speaks the simple protocol only.
      return (await c.query({ text: command, queryMode: 'simple' } as pg.QueryConfig)).rows;
    } finally {
      await c.end();
    }
  }
});
