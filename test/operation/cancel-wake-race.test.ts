import pg from 'pg';
import { describe, expect } from 'vitest';
import { newOperationRow, settleStatement } from '../../src/domain/operation/operation.ts';
import { onPostgres } from '../support/database.ts';
import { appTest, type TestApp } from '../support/kit.ts';
import { operationsConfig, tenant } from './helpers.ts';

/**
 * A cancel that read its target unsettled and is committing `waiting` (awaiting_target_settle) while the target
 * settles: the target's settlement must wake it once that commit lands, or the cancel sleeps until its recheck. The
 * settle statement waits for the cancel's row lock and re-reads the row (PostgreSQL re-checks an UPDATE's condition
 * against the version it waited for), so the wake lands on the committed `waiting` row. PostgreSQL only: embedded
 * PGlite runs one transaction at a time, so the two cannot interleave there.
 */
const test = appTest({ config: operationsConfig({ worker: false, pollMs: 60_000 }) });

describe.skipIf(!onPostgres())('a target settling while its cancel commits `waiting`', () => {
  let t: TestApp;
  test.beforeAll(({ app }) => void (t = app));

  test('wakes the cancel once its commit lands', async () => {
    const { deps } = t.app;
    const who = await tenant(t);
    const now = deps.clock.now();
    const leased = (owner: string, o: ReturnType<typeof newOperationRow>) => ({
      ...o,
      status: 'running',
      attempts: 1,
      leaseOwner: `${owner}:${o.id}`,
      leaseExpiresAt: new Date(now.getTime() + 60_000),
      result: {},
      progress: {},
      error: undefined,
    });
    const target = newOperationRow(deps, { organizationId: who.orgId, subject: { type: 'test', id: 'test_race' }, kind: 'test.target' });
    const cancel = newOperationRow(deps, {
      organizationId: who.orgId,
      subject: { type: 'test', id: 'test_race' },
      kind: 'test.cancel',
      plane: 'control',
      targetOperationId: target.id,
    });
    await deps.db.prisma.operation.create({ data: leased('a', target) });
    await deps.db.prisma.operation.create({ data: leased('b', cancel) });
    await deps.db.prisma.operation.update({ where: { id: target.id }, data: { cancelRequestedBy: cancel.id } });

    // The cancel's step, mid-transaction: it saw the target running and writes `waiting` with a far recheck.
    const step = new pg.Client({ connectionString: deps.config.databaseUrl });
    await step.connect();
    try {
      const recheck = new Date(now.getTime() + 3_600_000);
      await step.query('BEGIN');
      await step.query(
        `UPDATE "operation" SET status = 'waiting', waiting_reason = 'awaiting_target_settle', run_after = $2,
           lease_owner = NULL, lease_expires_at = NULL WHERE id = $1`,
        [cancel.id, recheck],
      );

      // The target settles meanwhile: its statement must wait for the cancel's commit, not skip the row.
      let done = false;
      const settled = deps.db.sql
        .transaction((send) => send([settleStatement(deps, target.id, { status: 'canceled' }, now)], { commit: true }))
        .finally(() => void (done = true));
      // pg_stat_activity is read once per transaction and kept: the snapshot is cleared so each look sees the settle.
      const waitingOnLock = async () => {
        await step.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await step.query(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
        );
        return Number(rows[0].n) > 0;
      };
      while (!done && !(await waitingOnLock())) await new Promise((r) => setImmediate(r));
      const blocked = !done;
      await step.query('COMMIT');
      const [rows] = await settled;
      expect(blocked).toBe(true);
      expect((rows![0] as { woken: number }).woken).toBe(1);
      const after = await deps.db.prisma.operation.findUniqueOrThrow({ where: { id: cancel.id } });
      expect(after.status).toBe('waiting');
      expect(after.runAfter.getTime()).toBe(now.getTime());
    } finally {
      await step.end();
    }
  });
});
