import type { Operation as OperationRow, PrismaClient } from '../../db/generated/client.ts';
import { Prisma, type Tx } from '../../db/database.ts';
import { inBatch, statement, type SqlPort } from '../../db/sql-port.ts';
import { LIVE_STATUSES } from './presenter.ts';

// The operation capability's SQL: the row's insert and reads, the wake-ups and settlement (operation.ts), and the
// engine's claim, lease fence and step outcomes (engine.ts).

type Db = Tx | PrismaClient;
/** A page's bound below the cursor (src/domain/action/list.ts). */
type Below = { id?: { lt: string } };

/** The channel on which PostgreSQL carries "an operation became due" between processes; the payload is the sender's worker id. */
export const OPERATIONS_CHANNEL = 'platform_operations';

/** Every column of `operation` (as `alias`) under its model name, so raw statements return `Operation` rows. */
export const operationColumns = (
  a: string,
) => `${a}.id, ${a}.organization_id AS "organizationId", ${a}.brand_id AS "brandId", ${a}.subject_type AS "subjectType",
  ${a}.subject_id AS "subjectId", ${a}.kind, ${a}.plane, ${a}.status, ${a}.waiting_reason AS "waitingReason", ${a}.attempts, ${a}.max_attempts AS "maxAttempts",
  ${a}.error, ${a}.result, ${a}.progress, ${a}.target_operation_id AS "targetOperationId", ${a}.parent_operation_id AS "parentOperationId",
  ${a}.cancel_requested_by AS "cancelRequestedBy", ${a}.run_after AS "runAfter", ${a}.lease_owner AS "leaseOwner", ${a}.lease_expires_at AS "leaseExpiresAt",
  ${a}.livemode, ${a}.created_at AS "createdAt", ${a}.updated_at AS "updatedAt", ${a}.completed_at AS "completedAt"`;
export const OPERATION_COLUMNS = operationColumns('o');

// Rows

/** Inserts an operation row (the partial unique index `operation_one_live_per_subject` refuses a second live one). */
export function insertOperation(tx: Tx, r: OperationRow): Promise<OperationRow> {
  const { error: _, result, progress, ...data } = r;
  return tx.operation.create({
    data: { ...data, result: result as Prisma.InputJsonObject, progress: progress as Prisma.InputJsonObject },
  });
}

/** The same insert as a statement of a batch. */
export function insertOperationStatement(r: OperationRow): Prisma.Sql {
  return Prisma.sql`INSERT INTO "operation" (id, organization_id, brand_id, subject_type, subject_id, kind, plane, status, attempts, max_attempts,
      progress, target_operation_id, parent_operation_id, run_after, lease_owner, lease_expires_at, created_at, updated_at)
    VALUES (${r.id}, ${r.organizationId}, ${r.brandId}, ${r.subjectType}, ${r.subjectId}, ${r.kind}, ${r.plane}, ${r.status}, ${r.attempts}::int,
      ${r.maxAttempts}::int, ${JSON.stringify(r.progress)}::jsonb, ${r.targetOperationId}, ${r.parentOperationId}, ${r.runAfter}::timestamptz,
      ${r.leaseOwner}, ${r.leaseExpiresAt}::timestamptz, ${r.createdAt}::timestamptz, ${r.updatedAt}::timestamptz)`;
}

/** NOTIFY on OPERATIONS_CHANNEL as a statement of a batch (`sender`: this process's worker id). */
export const notifyOperationsStatement = (sender: string): Prisma.Sql =>
  Prisma.sql`SELECT pg_notify(${OPERATIONS_CHANNEL}, ${sender})::text`;

/** Makes the waiting operations `where` selects due at `now`; returns how many. */
export async function wakeWaiting(tx: Tx, where: Prisma.OperationWhereInput, now: Date): Promise<number> {
  const { count } = await tx.operation.updateMany({ where: { ...where, status: 'waiting' }, data: { runAfter: now } });
  return count;
}

/** The live operation of a subject on a plane (null: none). */
export function findLiveOperation(db: Db, subject: { type: string; id: string }, plane: string) {
  return db.operation.findFirst({ where: { subjectType: subject.type, subjectId: subject.id, plane, status: { in: [...LIVE_STATUSES] } } });
}

/** The live fan-out children of an operation. */
export function liveChildOperations(tx: Tx, parentOperationId: string): Promise<OperationRow[]> {
  return tx.operation.findMany({ where: { parentOperationId, status: { in: [...LIVE_STATUSES] } } });
}

/** Every child's status (a statement of the launch's last batch). */
export const childStatusesStatement = (parentOperationId: string): Prisma.Sql =>
  Prisma.sql`SELECT status FROM "operation" WHERE parent_operation_id = ${parentOperationId}`;

/** An operation by id (null: none). */
export function findOperationById(db: Db, id: string): Promise<OperationRow | null> {
  return db.operation.findUnique({ where: { id } });
}

/** An operation by id that must exist. */
export function operationById(db: Db, id: string): Promise<OperationRow> {
  return db.operation.findUniqueOrThrow({ where: { id } });
}

/** An operation of the organization by id (null: none). */
export function findOperationOf(db: Db, organizationId: string, id: string): Promise<OperationRow | null> {
  return db.operation.findFirst({ where: { id, organizationId } });
}

/** What a list of operations filters on: all given ones apply. */
export interface OperationFilter {
  subjectType?: string;
  /** One of these subject ids (a bare uuid may be several kinds' ids). */
  subjectIds?: string[];
  status?: string;
  parentOperationId?: string;
  targetOperationId?: string;
}

/** A page of the organization's operations, newest first. */
export function operationsPage(db: Db, organizationId: string, f: OperationFilter, below: Below, take: number): Promise<OperationRow[]> {
  const where: Prisma.OperationWhereInput = {
    organizationId,
    ...(f.subjectType ? { subjectType: f.subjectType } : {}),
    ...(f.subjectIds ? { subjectId: { in: f.subjectIds } } : {}),
    ...(f.status ? { status: f.status } : {}),
    // Each walks its own index ((parent_operation_id), (target_operation_id)): a launch's children, a cancel's target.
    ...(f.parentOperationId ? { parentOperationId: f.parentOperationId } : {}),
    ...(f.targetOperationId ? { targetOperationId: f.targetOperationId } : {}),
  };
  return db.operation.findMany({ where: { ...where, ...below }, orderBy: { id: 'desc' }, take });
}

/** Records on a live operation which cancel asked for it; returns the row. */
export function markCancelRequested(tx: Tx, id: string, cancelId: string, now: Date): Promise<OperationRow> {
  return tx.operation.update({ where: { id }, data: { cancelRequestedBy: cancelId, updatedAt: now } });
}

/** Live operations counted per status (the metric). */
export async function liveOperationCounts(db: PrismaClient): Promise<Record<string, number>> {
  const rows = await db.operation.groupBy({ by: ['status'], where: { status: { in: [...LIVE_STATUSES] } }, _count: true });
  return Object.fromEntries(rows.map((r) => [r.status, r._count]));
}

// Settlement

/** What a settlement writes: the terminal status, and the error, result and progress (absent: the stored ones stay). */
export interface SettleValues {
  id: string;
  status: string;
  error?: object | null;
  result?: object;
  progress?: object;
  now: Date;
  /** The lease a handed parent gets. */
  leaseUntil: Date;
  /** This process's worker id, the NOTIFY's payload. */
  sender: string;
  /** A local slot's lease owner: the woken parent is claimed for it. */
  handoff?: string;
}

/** A row of the settle statement: the settled operation (`role` settled, with how many it woke) or the parent handed to this process. */
export type SettleRow = OperationRow & { role: 'settled' | 'handed'; woken: number; notified: number };

/**
 * One statement settles a live operation, wakes whoever waits on it (its parent, a cancel targeting it) and, if it
 * woke any, notifies other processes; it returns the settled row and how many it woke. A cancel targeting it whose
 * step is in flight is matched too, so the statement waits for that step's commit and re-reads the row (PostgreSQL
 * re-checks an UPDATE's condition on the version it waited for): a cancel that read this operation live and commits
 * `waiting` is woken once its commit lands, never left to its recheck (test/operation/cancel-wake-race.test.ts). A
 * cancel step only reads its target, so the wait cannot close a cycle. A missing error, result or
 * progress leaves the stored one. With `handoff` (a local slot's lease owner), the woken parent is also claimed for
 * that slot in the same statement, unless another worker holds it, and returned as a second row (`role` handed).
 * Only a row this statement leased to the slot is handed: a woken row without a lease (a cancel that committed
 * `waiting`) is not, or it would run under no lease and fail its fence while the slot's claim held it.
 */
export function settleStatement(v: SettleValues): Prisma.Sql {
  const json = (x: object | null | undefined) => (x ? JSON.stringify(x) : null);
  const { id, now, handoff } = v;
  const hand = Prisma.sql`(${handoff ?? null}::text IS NOT NULL AND w.id = o.parent_operation_id AND (w.lease_expires_at IS NULL OR w.lease_expires_at < ${now}::timestamptz))`;
  return Prisma.sql`
    WITH o AS (
      UPDATE "operation" o SET
        status = ${v.status}, waiting_reason = NULL,
        error = COALESCE(${json(v.error)}::jsonb, o.error),
        result = COALESCE(${json(v.result)}::jsonb, o.result),
        progress = COALESCE(${json(v.progress)}::jsonb, o.progress),
        lease_owner = NULL, lease_expires_at = NULL, updated_at = ${now}::timestamptz, completed_at = ${now}::timestamptz
      WHERE o.id = ${id} AND o.status IN ('pending', 'running', 'waiting')
      RETURNING o.*),
    touched AS (
      UPDATE "operation" w SET run_after = CASE WHEN w.status = 'waiting' THEN ${now}::timestamptz ELSE w.run_after END,
        lease_owner = CASE WHEN ${hand} THEN ${handoff ?? null}::text || ':' || w.id ELSE w.lease_owner END,
        lease_expires_at = CASE WHEN ${hand} THEN ${v.leaseUntil}::timestamptz ELSE w.lease_expires_at END
      FROM o
      WHERE (w.status = 'waiting' AND (w.target_operation_id = o.id OR w.id = o.parent_operation_id))
         OR (w.status IN ('pending', 'running') AND w.target_operation_id = o.id)
      RETURNING w.*, w.status = 'waiting' AS woke, coalesce(w.lease_owner = ${handoff ?? null}::text || ':' || w.id, false) AS handed),
    woken AS (SELECT * FROM touched WHERE woke),
    notified AS (SELECT pg_notify(${OPERATIONS_CHANNEL}, ${v.sender}) FROM (SELECT FROM woken LIMIT 1) first)
    SELECT 'settled' AS role, ${Prisma.raw(OPERATION_COLUMNS)}, (SELECT count(*)::int FROM woken) AS woken, (SELECT count(*)::int FROM notified) AS notified FROM o
    UNION ALL
    SELECT 'handed', ${Prisma.raw(operationColumns('w'))}, 0, 0 FROM woken w WHERE w.handed`;
}

/** Runs the settle statement in the caller's transaction; the settled row, if the operation was live. */
export async function settleOperationRow(tx: Tx, v: SettleValues): Promise<SettleRow | undefined> {
  return (await tx.$queryRaw<SettleRow[]>(settleStatement(v))).find((r) => r.role === 'settled');
}

// The engine (engine.ts)

/**
 * One statement (its own transaction, one round trip) that claims up to
 * `limit` due operations, most overdue first, and returns them whole. Each
 * gets its own lease owner, `<owner>:<id>`, where the caller's `owner` is
 * unique per claim: two runs never pass each other's fence, in this process
 * or another. Due is pending or waiting with `run_after` passed and no live
 * lease, or running with its lease expired: each branch walks its own partial
 * index in claim order (migration 20261126020000) and locks up to `limit`,
 * skipping rows other claims hold; the most overdue of both are claimed (the
 * few others stay locked until this statement's transaction ends).
 */
export const claimStatement = statement<[owner: string, now: Date, leaseUntil: Date, limit: number], OperationRow>(
  'operations_claim',
  `WITH due_waiting AS (
     SELECT id, run_after FROM "operation"
     WHERE status IN ('pending', 'waiting') AND run_after <= $2 AND (lease_expires_at IS NULL OR lease_expires_at < $2)
     ORDER BY run_after, id
     LIMIT $4
     FOR UPDATE SKIP LOCKED
   ), due_expired AS (
     SELECT id, run_after FROM "operation"
     WHERE status = 'running' AND lease_expires_at < $2
     ORDER BY run_after, id
     LIMIT $4
     FOR UPDATE SKIP LOCKED
   ), due AS (
     SELECT id FROM (SELECT * FROM due_waiting UNION ALL SELECT * FROM due_expired) d ORDER BY run_after, id LIMIT $4
   )
   UPDATE "operation" o SET
     lease_owner = $1 || ':' || o.id, lease_expires_at = $3, updated_at = $2,
     status = CASE WHEN o.status = 'waiting' THEN 'waiting' ELSE 'running' END,
     attempts = CASE WHEN o.status = 'waiting' THEN o.attempts ELSE o.attempts + 1 END
   FROM due
   WHERE o.id = due.id
   RETURNING ${OPERATION_COLUMNS}`,
);

/** Claims up to `limit` due operations for `owner`, autocommitted. */
export function claimDueOperations(sql: SqlPort, owner: string, now: Date, leaseUntil: Date, limit: number): Promise<OperationRow[]> {
  return sql.rows(claimStatement, [owner, now, leaseUntil, limit]);
}

/** The same claim as a statement of a batch. */
export const claimDueOperationsStatement = (owner: string, now: Date, leaseUntil: Date, limit: number): Prisma.Sql =>
  inBatch(claimStatement, [owner, now, leaseUntil, limit]);

/** A step that keeps running: the lease renewed, the progress stored (null: kept); returns the row. */
export const continueStatement = (id: string, progress: string | null, leaseUntil: Date, now: Date) =>
  Prisma.sql`UPDATE "operation" o SET status = 'running', waiting_reason = NULL, progress = COALESCE(${progress}::jsonb, o.progress),
            lease_expires_at = ${leaseUntil}::timestamptz, updated_at = ${now}::timestamptz
          WHERE o.id = ${id} RETURNING ${Prisma.raw(OPERATION_COLUMNS)}`;

/** A step that parks the operation until `runAfter` (or a wake-up), the lease given back. */
export const waitStatement = (id: string, reason: string, progress: string | null, runAfter: Date, now: Date) =>
  Prisma.sql`UPDATE "operation" o SET status = 'waiting', waiting_reason = ${reason}, progress = COALESCE(${progress}::jsonb, o.progress),
            run_after = ${runAfter}::timestamptz, lease_owner = NULL, lease_expires_at = NULL, updated_at = ${now}::timestamptz
          WHERE o.id = ${id}`;

/** A transient failure: pending again at `runAfter`, the lease given back. */
export const retryStatement = (id: string, progress: string, runAfter: Date, now: Date) =>
  Prisma.sql`UPDATE "operation" o SET status = 'pending', waiting_reason = NULL, progress = ${progress}::jsonb,
            run_after = ${runAfter}::timestamptz, lease_owner = NULL, lease_expires_at = NULL, updated_at = ${now}::timestamptz
          WHERE o.id = ${id}`;

/** What the lease fence returns: the columns others may write while a run holds the lease. */
export type Fenced = Pick<OperationRow, 'cancelRequestedBy' | 'runAfter' | 'updatedAt'>;

/**
 * The lease fence in one statement: no row when `owner` no longer holds a live lease. While it does, only the columns
 * others may write (a cancel's request, a wake-up's run_after) can differ from the row the run holds, so only those
 * come back instead of the whole row, its JSON documents and instants parsed at every step.
 */
export const fenceStatement = (id: string, owner: string, now: Date) => Prisma.sql`
  UPDATE "operation" o SET updated_at = ${now}::timestamptz
  WHERE o.id = ${id} AND o.lease_owner = ${owner} AND o.status IN ('pending', 'running', 'waiting')
  RETURNING o.cancel_requested_by AS "cancelRequestedBy", o.run_after AS "runAfter", o.updated_at AS "updatedAt"`;

/**
 * The same fence as the first statement of a batch that also carries the writes and the COMMIT (a step with no
 * reads commits in one round trip): when `owner` no longer holds a live lease it fails with LEASE_LOST (a cast that
 * can only fail at run time, on the count of fenced rows), which aborts the batch before any write applies. Its row:
 * the fenced columns and `fenced`.
 */
const LEASE_LOST = 'operation_lease_lost';
export const assertFenceStatement = (id: string, owner: string, now: Date) => Prisma.sql`
  WITH f AS (${fenceStatement(id, owner, now)})
  SELECT f.*, (SELECT CASE WHEN count(*) = 1 THEN 1 ELSE (${LEASE_LOST} || ':' || count(*))::int END FROM f) AS fenced
  FROM (SELECT 1) one LEFT JOIN f ON true`;
/** Whether a batch failed on assertFenceStatement. */
export const isLeaseLost = (e: unknown) => e instanceof Error && e.message.includes(LEASE_LOST);

/** The fence in the caller's transaction (undefined: the lease is lost). */
export async function fenceOperation(tx: Tx, id: string, owner: string, now: Date): Promise<Fenced | undefined> {
  return (await tx.$queryRaw<Fenced[]>(fenceStatement(id, owner, now)))[0];
}

/** Extends a live operation's lease while `owner` holds it. */
export async function renewLease(db: PrismaClient, id: string, owner: string, until: Date): Promise<void> {
  await db.operation.updateMany({
    where: { id, leaseOwner: owner, status: { in: [...LIVE_STATUSES] } },
    data: { leaseExpiresAt: until },
  });
}

/** The operation while `owner` holds its lease and it is live (null otherwise). */
export function findLeasedOperation(tx: Tx, id: string, owner: string): Promise<OperationRow | null> {
  return tx.operation.findFirst({ where: { id, leaseOwner: owner, status: { in: [...LIVE_STATUSES] } } });
}
