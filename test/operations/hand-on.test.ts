import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/db/generated/client.ts';
import { Prisma } from '../../src/db/database.ts';
import type { BatchSend } from '../../src/db/sql-port.ts';
import { claimOperations, runClaimed, type OperationHandler } from '../../src/domain/operation/engine.ts';
import { newOperationRow } from '../../src/domain/operation/operation.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { onPostgres } from '../support/database.ts';
import { launch, op, sandbox, tenant } from './helpers.ts';

/**
 * Fewer round trips and hops between a launch's steps (issue #13, scenario 7): a step with no reads commits in one
 * batch whose fence aborts it when the lease is lost; a provisioning child started at its parent's commit runs on the
 * deployment that commit left, without reading it again, and its settling commit also reads what its parent's last
 * step needs, which then commits in one batch; a run that settles hands its slot to the next due operation in its own
 * commit, with no separate claim.
 */
const operations = (worker: boolean, concurrency = 4) => ({
  worker,
  concurrency,
  pollMs: 60_000,
  leaseMs: 30_000,
  recheckMs: 60_000,
  retryBaseMs: 1000,
  retryMaxMs: 60_000,
  maxAttempts: 3,
});
const TERMINAL = ['succeeded', 'partial', 'failed', 'canceled'];

/** Waits for the worker of `t` to settle `id` (each change it reports), bounded. */
async function settled(t: TestApp, who: Awaited<ReturnType<typeof tenant>>, id: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const stop = new AbortController();
    const changed = t.app.operations.nextChange(id, Math.max(0, deadline - Date.now()), stop.signal);
    const row = await op(t, who, id);
    if (TERMINAL.includes(row.status)) {
      stop.abort();
      return row;
    }
    if (Date.now() >= deadline) throw new Error(`operation ${id} still ${row.status}`);
    await changed;
  }
}

/** Counts, while `fn` runs, named reads by statement name and the batches of every port transaction that carries a lease fence. */
async function counting<T>(t: TestApp, fn: () => Promise<T>) {
  const sql = t.app.deps.db.sql;
  const { rows, transaction } = sql;
  const reads = new Map<string, number>();
  let fencedBatches = 0;
  let claimed = 0;
  sql.rows = async (s, params) => {
    const found = await rows(s, params);
    reads.set(s.name, (reads.get(s.name) ?? 0) + 1);
    if (s.name === 'operations_claim') claimed += found.length;
    return found;
  };
  sql.transaction = (body) =>
    transaction((send) => {
      let sends = 0;
      let fenced = false;
      const counted: BatchSend = async (statements, opts) => {
        sends++;
        if (statements.some((s) => s.text.includes('o.lease_owner = '))) fenced = true;
        try {
          return await send(statements, opts);
        } finally {
          if (fenced && (opts?.commit || sends > 1)) {
            fencedBatches += sends;
            sends = 0;
            fenced = false;
          }
        }
      };
      return body(counted);
    });
  try {
    const out = await fn();
    return { out, reads, fencedBatches: () => fencedBatches, claimed: () => claimed };
  } finally {
    sql.rows = rows;
    sql.transaction = transaction;
  }
}

describe('hand-on: round trips and hops between steps', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ operations: operations(true) });
  });
  afterAll(() => t?.stop());

  it('a launch with a free slot: its child reads no deployment before the provider call, and commits in one batch', async () => {
    const who = await tenant(t);
    const c = await counting(t, async () => {
      const { operation } = await launch(t, who, { deployments: [sandbox()] });
      expect(operation).toMatchObject({ status: 'running' });
      return settled(t, who, operation.id);
    });
    expect(c.out).toMatchObject({ status: 'succeeded', result: { deployments_succeeded: 1 } });
    expect(c.reads.get('deployment_by_id') ?? 0).toBe(0);
    // Reserve and fan out: fence + reads, then writes + COMMIT; the child: one batch, which also reads for its parent;
    // the finish, handed those reads: one batch.
    expect(c.fencedBatches()).toBe(4);
  });

  it('launches with several deployments settle every child and finish once, whichever child hands the launch on', async () => {
    const who = await tenant(t);
    const launched = await Promise.all([1, 2, 3].map(() => launch(t, who, { deployments: [sandbox(), sandbox(), sandbox()] })));
    for (const { operation } of launched) {
      expect(await settled(t, who, operation.id)).toMatchObject({
        status: 'succeeded',
        result: { deployments_succeeded: 3, deployments_total: 3 },
      });
    }
  });

  it('with one slot, the launch that found it busy is claimed by the settling commit of the run that held it (PostgreSQL)', async () => {
    const one = await startTestApp({ operations: operations(true, 1) });
    try {
      const who = await tenant(one);
      const c = await counting(one, async () => {
        const first = await launch(one, who, { deployments: [sandbox({ delay_ms: 300 })] });
        const second = await launch(one, who, { deployments: [sandbox()] });
        expect(second.operation).toMatchObject({ status: 'pending', attempts: 0 });
        return Promise.all([first, second].map(({ operation }) => settled(one, who, operation.id)));
      });
      for (const row of c.out) expect(row).toMatchObject({ status: 'succeeded', attempts: 1 });
      // On PGlite (one connection, nothing to save) the kick claims it, after pending I/O.
      expect(c.claimed()).toBe(onPostgres() ? 0 : 1);
    } finally {
      await one.stop();
    }
  });
});

describe('a one-batch commit is fenced', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ operations: operations(false) });
  });
  afterAll(() => t?.stop());

  /** A handler whose only step writes `progress` and settles in one batch, after `before` ran. */
  const oneTrip = (before: (op: Operation) => Promise<void>): OperationHandler => ({
    kind: 'test.one_trip',
    async step(ctx) {
      await before(ctx.op);
      return ctx.commitBatched([], () => ({
        statements: [Prisma.sql`UPDATE "operation" SET progress = '{"written": true}' WHERE id = ${ctx.op.id}`],
        outcome: { status: 'succeeded', result: { done: true } },
      }));
    },
  });

  async function claimedRow() {
    const who = await tenant(t);
    const row = newOperationRow(t.app.deps, {
      organizationId: who.orgId,
      subject: { type: 'test', id: `test_${Date.now()}_${Math.random()}` },
      kind: 'test.one_trip',
    });
    const { error: _, ...data } = row;
    await t.app.deps.db.prisma.operation.create({ data: { ...data, result: {}, progress: {} } });
    const [claimed] = await claimOperations(t.app.deps, `test#${row.id}`, 1);
    expect(claimed?.id).toBe(row.id);
    return claimed!;
  }
  const read = (id: string) => t.app.deps.db.prisma.operation.findUniqueOrThrow({ where: { id } });

  it('commits its writes, events and outcome when the lease holds', async () => {
    const claimed = await claimedRow();
    await runClaimed(t.app.deps, new Map([['test.one_trip', oneTrip(async () => {})]]), claimed);
    expect(await read(claimed.id)).toMatchObject({
      status: 'succeeded',
      progress: { written: true },
      result: { done: true },
      leaseOwner: null,
    });
  });

  it('applies nothing when the lease was taken over before the batch', async () => {
    const claimed = await claimedRow();
    const steal = async (o: Operation) => {
      await t.app.deps.db.prisma.operation.update({ where: { id: o.id }, data: { leaseOwner: 'another-worker' } });
    };
    await runClaimed(t.app.deps, new Map([['test.one_trip', oneTrip(steal)]]), claimed);
    const after = await read(claimed.id);
    expect(after).toMatchObject({ status: 'running', leaseOwner: 'another-worker', progress: {}, result: {} });
  });
});
