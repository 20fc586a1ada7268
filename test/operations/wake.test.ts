import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { onPostgres } from '../support/database.ts';
import { startSecondApp } from '../support/stream-client.ts';
import { launch, op, sandbox, tenant, type Tenant } from './helpers.ts';

/**
 * Operations are woken by the commits that make them due, not by the poll:
 * every worker here polls once a minute, and each launch must settle far
 * sooner. In one process the enqueuing commit kicks the worker; across
 * processes (PostgreSQL) the same commit's NOTIFY does.
 */
const POLL_MS = 60_000;
/** Generous for a loaded machine (a launch takes well under a second on a quiet one), and half the poll. */
const BOUND_MS = 30_000;
const TERMINAL = ['succeeded', 'partial', 'failed', 'canceled'];
const operations = (worker: boolean) => ({
  worker,
  pollMs: POLL_MS,
  leaseMs: 30_000,
  recheckMs: 60_000,
  retryBaseMs: 1000,
  retryMaxMs: 60_000,
  maxAttempts: 3,
});

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ operations: operations(true) });
});
afterAll(() => t?.stop());

/** Reads the operation (through `reader`'s HTTP API) each time `worker`'s process reports a change to it, until terminal; fails after BOUND_MS. */
async function settled(reader: TestApp, worker: App, who: Tenant, id: string) {
  const deadline = Date.now() + BOUND_MS;
  for (;;) {
    const stop = new AbortController();
    const changed = worker.operations.nextChange(id, Math.max(0, deadline - Date.now()), stop.signal);
    const row = await op(reader, who, id);
    if (TERMINAL.includes(row.status)) {
      stop.abort();
      return row;
    }
    if (Date.now() >= deadline) throw new Error(`operation ${id} still ${row.status} after ${BOUND_MS} ms (poll every ${POLL_MS} ms)`);
    await changed;
  }
}

describe('operations wake-up', () => {
  it('a launch settles promptly with the poll at a minute: woken by its own commits, child and parent', async () => {
    const who = await tenant(t);
    const launched = await Promise.all([1, 2, 3].map(() => launch(t, who, { deployments: [sandbox(), sandbox()] })));
    for (const { operation } of launched) {
      expect(await settled(t, t.app, who, operation.id)).toMatchObject({ status: 'succeeded', result: { deployments_succeeded: 2 } });
    }
  });

  it('with a free slot a launch runs here from its request to its end: started at its commit, child and parent handed on, no claim', async () => {
    const who = await tenant(t);
    const sql = t.app.deps.db.sql;
    const rows = sql.rows;
    let claims = 0;
    // Claims that took something (an idle kick may still look and find nothing).
    sql.rows = async (s, params) => {
      const found = await rows(s, params);
      if (s.name === 'operations_claim' && found.length) claims++;
      return found;
    };
    try {
      const { operation } = await launch(t, who, { deployments: [sandbox()] });
      // Inserted leased to this process's worker: running, first attempt, before any claim.
      expect(operation).toMatchObject({ status: 'running', attempts: 1 });
      expect(await settled(t, t.app, who, operation.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
      const [child] = (await t.http.get(`/v1/platform/operations?subject_type=deployment`, { token: who.token })).body.data;
      expect(child).toMatchObject({ status: 'succeeded', attempts: 1, parent_operation_id: operation.id });
      expect(claims).toBe(0);
    } finally {
      sql.rows = rows;
    }
  });

  it('with one slot, launches that found it busy are claimed as runs end, not at the poll', async () => {
    const one = await startTestApp({ operations: { ...operations(true), concurrency: 1 } });
    try {
      const who = await tenant(one);
      // The first takes the only slot (its child's provider call is slow); the second finds it busy and is left pending.
      const first = await launch(one, who, { deployments: [sandbox({ delay_ms: 1500 })] });
      const second = await launch(one, who, { deployments: [sandbox()] });
      expect(second.operation).toMatchObject({ status: 'pending', attempts: 0 });
      for (const { operation } of [first, second])
        expect(await settled(one, one.app, who, operation.id)).toMatchObject({ status: 'succeeded' });
    } finally {
      await one.stop();
    }
  });

  it.skipIf(!onPostgres())('across processes: enqueued on A (no worker), B picks it up through NOTIFY', async () => {
    const a = await startTestApp({ operations: operations(false) });
    const b = await startSecondApp(a, { operations: operations(true) });
    try {
      const who = await tenant(a);
      const { operation } = await launch(a, who, { deployments: [sandbox()] });
      expect(await settled(a, b.app, who, operation.id)).toMatchObject({ status: 'succeeded' });
    } finally {
      await b.stop();
      await a.stop();
    }
  });

  it.skipIf(!onPostgres())("a NOTIFY lost while B's listener reconnects is covered: B looks again when it is back", async () => {
    const a = await startTestApp({ operations: operations(false) });
    const b = await startSecondApp(a, { operations: operations(true) });
    try {
      const who = await tenant(a);
      // Only B listens on the operations channel (A runs no worker); cut that connection, then launch while it is down.
      const { rows } = await a.app.deps.db.pool!.query(
        `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN platform_operations'`,
      );
      expect(rows).toHaveLength(1);
      const { operation } = await launch(a, who, { deployments: [sandbox()] });
      expect(await settled(a, b.app, who, operation.id)).toMatchObject({ status: 'succeeded' });
    } finally {
      await b.stop();
      await a.stop();
    }
  });
});
