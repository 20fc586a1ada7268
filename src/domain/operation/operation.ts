import { z } from 'zod';
import type { Operation as OperationRow } from '../../db/generated/client.ts';
import type { Prisma, Tx } from '../../db/database.ts';
import { notify } from '../../db/notify.ts';
import type { Deps, OperationSlot } from '../context.ts';
import { appendEvent, type NewEvent } from '../event/event.ts';
import { DomainError, isUniqueViolation, missing } from '../errors.ts';
import { isId, newId, normalizeId, type IdKind } from '../id.ts';
import { capability, read, type Reader } from '../action/action.ts';
import { ListInput, listOf, newestFirst } from '../action/list.ts';
import {
  OPERATION_STATUSES,
  Operation,
  TERMINAL_STATUSES,
  presentOperation,
  type OperationError,
  type OperationStatus,
  type PublicOperation,
} from './presenter.ts';
import {
  findLiveOperation,
  findOperationById,
  findOperationOf,
  insertOperation,
  insertOperationStatement,
  markCancelRequested,
  notifyOperationsStatement,
  OPERATIONS_CHANNEL,
  operationsPage,
  settleOperationRow,
  settleStatement as settleSql,
  wakeWaiting,
} from './store.ts';
// The public object lives in presenter.ts (free of event imports, so the event payload schemas can build on it).
export {
  LIVE_STATUSES,
  OPERATION_STATUSES,
  Operation,
  TERMINAL_STATUSES,
  WAITING_REASONS,
  presentOperation,
  type OperationError,
  type OperationStatus,
  type PublicOperation,
  type WaitingReason,
} from './presenter.ts';

/**
 * Operations: the polled handle of every asynchronous mutation. This module
 * owns the row's shape, its public form, creation (with the one-live-per-
 * subject rule the database enforces) and the terminal transition with its
 * `operation.*` event. The runner that moves operations lives in engine.ts.
 */
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

export const isTerminal = (status: string): status is TerminalStatus => (TERMINAL_STATUSES as readonly string[]).includes(status);

/** Mutations hold the subject exclusively; a cancel runs on the control plane beside them. */
export type Plane = 'mutation' | 'control';

export interface NewOperation {
  organizationId: string;
  brandId?: string | null;
  subject: { type: string; id: string };
  kind: string;
  plane?: Plane;
  targetOperationId?: string | null;
  parentOperationId?: string | null;
  progress?: Record<string, unknown>;
  /**
   * A slot of this process's worker (`inlineSlots`): the operation is inserted running under the slot's lease (attempt
   * 1) and runs right after the commit, instead of waiting to be woken and claimed.
   */
  slot?: OperationSlot;
}

/** The row `enqueueOperation` inserts: pending, or already running under a local slot's lease. */
export function newOperationRow(deps: Deps, o: NewOperation): OperationRow {
  const now = deps.clock.now();
  const id = newId('operation');
  return {
    id,
    organizationId: o.organizationId,
    brandId: o.brandId ?? null,
    subjectType: o.subject.type,
    subjectId: o.subject.id,
    kind: o.kind,
    plane: o.plane ?? 'mutation',
    status: o.slot ? 'running' : 'pending',
    waitingReason: null,
    attempts: o.slot ? 1 : 0,
    maxAttempts: deps.config.operations.maxAttempts,
    error: null,
    result: {},
    progress: (o.progress ?? {}) as Prisma.JsonObject,
    targetOperationId: o.targetOperationId ?? null,
    parentOperationId: o.parentOperationId ?? null,
    cancelRequestedBy: null,
    runAfter: now,
    leaseOwner: o.slot ? `${o.slot.owner}:${id}` : null,
    leaseExpiresAt: o.slot ? new Date(now.getTime() + deps.config.operations.leaseMs) : null,
    livemode: true,
    createdAt: now,
    updatedAt: now,
    completedAt: null,
  };
}

/**
 * Runs `fn` (which wraps one transaction) with `take`, which reserves a run slot of this process for an operation
 * the transaction enqueues; slots not started by the commit (a rollback, an error) are given back. With `handover`
 * (a running operation's commit that ends its run), the first slot taken is that run's own.
 */
export async function inlineSlots<T>(deps: Deps, fn: (take: () => OperationSlot | undefined) => Promise<T>, handover = false): Promise<T> {
  const slots: OperationSlot[] = [];
  try {
    return await fn(() => {
      const slot = deps.operations?.reserve(handover && !slots.length);
      if (slot) slots.push(slot);
      return slot;
    });
  } finally {
    for (const s of slots) s.cancel();
  }
}

/** Counts and logs (info) a change of an operation's status, once committed: `from` is absent for a new operation or one settled outside its run. */
export function operationTransition(
  deps: Deps,
  op: { id: string; kind: string; attempts: number },
  from: string | undefined,
  to: string,
): void {
  deps.metrics?.operationTransitions.labels(op.kind, to).inc();
  deps.log.info({ operation_id: op.id, kind: op.kind, from, to, attempt: op.attempts }, 'operation transition');
}

/**
 * Inserts a pending operation (or a running one under a local slot, see NewOperation.slot). The partial unique index
 * `operation_one_live_per_subject` is the rule: a second live operation on
 * the same subject and plane fails here (on PostgreSQL a concurrent insert
 * waits for the first to commit, then fails), whatever the caller read before.
 */
export async function enqueueOperation(deps: Deps, tx: Tx, o: NewOperation): Promise<OperationRow> {
  try {
    const row = await insertOperation(tx, newOperationRow(deps, o));
    const slot = o.slot;
    deps.db.afterCommit(tx, () => operationTransition(deps, row, undefined, row.status));
    // Leased to this process: nobody else may claim it, so there is nothing to announce.
    if (slot) deps.db.afterCommit(tx, () => slot.run(row));
    else await announceDue(deps, tx);
    return row;
  } catch (e) {
    if (isUniqueViolation(e)) throw operationConflict(o.subject);
    throw e;
  }
}

/**
 * The same enqueue on the batched SQL port (src/db/sql-port.ts): the row, the statements that insert and announce it
 * inside the caller's transaction, and what to run once that transaction has committed.
 */
export function enqueueBatched(deps: Deps, o: NewOperation): { row: OperationRow; statements: Prisma.Sql[]; committed(): void } {
  const r = newOperationRow(deps, o);
  const slot = o.slot;
  // As in enqueueOperation: one leased to this process is run after the commit; any other is announced.
  const notify = !slot && deps.db.kind === 'postgres' ? [notifyOperationsStatement(deps.operations?.id ?? '')] : [];
  return {
    row: r,
    statements: [insertOperationStatement(r), ...notify],
    committed: () => {
      operationTransition(deps, r, undefined, r.status);
      if (slot) slot.run(r);
      else deps.operations?.kick();
    },
  };
}

export const operationConflict = (subject: { type: string; id: string }) =>
  new DomainError(
    'operation_conflict',
    `The ${subject.type} ${subject.id} already has a live operation; wait for it to settle or cancel it`,
    null,
  );

/** The live operation of a subject on a plane, if any. */
export function liveOperation(db: Tx | Deps['db']['prisma'], subject: { type: string; id: string }, plane: Plane = 'mutation') {
  return findLiveOperation(db, subject, plane);
}

const announced = new WeakSet<object>();

/**
 * Announces, from inside the transaction that made an operation due
 * (enqueued or woken), that workers should look: this process's worker is
 * kicked after commit, and on PostgreSQL a NOTIFY (once per transaction)
 * reaches every other process's worker at commit. A lost notification is
 * covered by the workers' poll.
 */
async function announceDue(deps: Deps, tx: Tx): Promise<void> {
  if (announced.has(tx)) return;
  announced.add(tx);
  deps.db.afterCommit(tx, () => deps.operations?.kick());
  if (deps.db.kind === 'postgres') await notify(tx, OPERATIONS_CHANNEL, deps.operations?.id ?? '');
}

/** Makes waiting operations due now (their blocker may have cleared); workers pick them up at commit. */
export async function wakeOperations(deps: Deps, tx: Tx, where: Prisma.OperationWhereInput): Promise<number> {
  const count = await wakeWaiting(tx, where, deps.clock.now());
  if (count) await announceDue(deps, tx);
  return count;
}

export interface Settlement {
  status: TerminalStatus;
  result?: Record<string, unknown>;
  error?: OperationError | null;
  progress?: Record<string, unknown>;
  /** For `canceled`: an explicit cancel (default) or a newer decision that made it moot. */
  canceledAs?: 'operation.canceled' | 'operation.superseded';
}

const EVENT_OF: Record<TerminalStatus, string> = {
  succeeded: 'operation.succeeded',
  partial: 'operation.succeeded',
  failed: 'operation.failed',
  canceled: 'operation.canceled',
};

/**
 * The statement that settles a live operation and wakes whoever waits on it (the store's settleStatement says how),
 * with this deployment's lease for a parent handed to `handoff` (a local slot's lease owner).
 */
export function settleStatement(deps: Deps, id: string, s: Settlement, now: Date, handoff?: string): Prisma.Sql {
  return settleSql(settleValues(deps, id, s, now, handoff));
}

const settleValues = (deps: Deps, id: string, s: Settlement, now: Date, handoff?: string) => ({
  id,
  status: s.status,
  error: s.error,
  result: s.result,
  progress: s.progress,
  now,
  leaseUntil: new Date(now.getTime() + deps.config.operations.leaseMs),
  sender: deps.operations?.id ?? '',
  handoff,
});

/** What `settleStatement` leaves of a live row it holds (a fenced run's): the same row the statement returns. */
export function settledRow(op: OperationRow, s: Settlement, now: Date): OperationRow {
  return {
    ...op,
    status: s.status,
    waitingReason: null,
    error: (s.error ?? op.error) as OperationRow['error'],
    result: (s.result ?? op.result) as OperationRow['result'],
    progress: (s.progress ?? op.progress) as OperationRow['progress'],
    leaseOwner: null,
    leaseExpiresAt: null,
    updatedAt: now,
    completedAt: now,
  };
}

/** The `operation.*` event of a settled row. */
export function settledEvent(row: OperationRow, s: Settlement): NewEvent {
  return {
    organizationId: row.organizationId,
    type: s.status === 'canceled' ? (s.canceledAs ?? 'operation.canceled') : EVENT_OF[s.status],
    subject: { type: row.subjectType, id: row.subjectId },
    data: { object: presentOperation(row) },
    operationId: row.id,
    brandId: row.brandId,
  };
}

/**
 * Moves an operation to a terminal status, appends its `operation.*` event
 * and wakes whoever waits on it (its parent, a cancel targeting it), all in
 * the caller's transaction. Only a live operation settles: false otherwise.
 */
export async function settleOperation(deps: Deps, tx: Tx, id: string, s: Settlement): Promise<boolean> {
  const settled = await settleOperationRow(tx, settleValues(deps, id, s, deps.clock.now()));
  if (!settled) return false;
  const { woken, notified: _, role: __, ...row } = settled;
  if (woken) {
    announced.add(tx);
    deps.db.afterCommit(tx, () => deps.operations?.kick());
  }
  await appendEvent(deps, tx, settledEvent(row, s));
  deps.db.afterCommit(tx, () => (operationTransition(deps, row, undefined, s.status), deps.operations?.changed(id)));
  return true;
}

/**
 * The request half of a cancel (control plane): records on the live target which cancel asked (it settles `canceled`
 * at its next step), wakes it if it waits, and appends `operation.cancel_requested`.
 */
export async function requestCancel(deps: Deps, tx: Tx, target: OperationRow, cancel: OperationRow): Promise<void> {
  const marked = await markCancelRequested(tx, target.id, cancel.id, deps.clock.now());
  await wakeOperations(deps, tx, { id: target.id });
  await appendEvent(deps, tx, {
    organizationId: target.organizationId,
    type: 'operation.cancel_requested',
    subject: { type: target.subjectType, id: target.subjectId },
    data: { object: presentOperation(marked), canceled_by: cancel.id },
    operationId: cancel.id,
    brandId: target.brandId,
  });
}

/**
 * How a cancel's target ended, once it has (null while it is live): its terminal status, and whether it finished
 * before the cancel reached it (a cancel without a target: both null).
 */
export async function targetSettlement(
  tx: Tx,
  cancel: OperationRow,
): Promise<{ target_outcome: string | null; target_finished_first: boolean | null } | null> {
  const target = cancel.targetOperationId ? await findOperationById(tx, cancel.targetOperationId) : null;
  if (target && !isTerminal(target.status)) return null;
  return { target_outcome: target?.status ?? null, target_finished_first: target ? target.status !== 'canceled' : null };
}

const SUBJECT_KINDS: Record<string, IdKind> = { distribution: 'distribution', deployment: 'deployment' };

export const ListOperationsInput = z.strictObject({
  subject_type: z.string().min(1).max(64).optional(),
  subject_id: z.string().min(1).max(128).optional(),
  status: z.string().optional(),
  parent_operation_id: z.string().min(1).max(128).optional().describe('Only the fan-out children of this op_ operation'),
  target_operation_id: z.string().min(1).max(128).optional().describe('Only the cancels targeting this op_ operation'),
  ...ListInput.shape,
});

export const NoOperationInput = z.strictObject({});

/** `subject_id` as given, prefixed, or a bare uuid (with or without dashes) matched against every subject kind it could be. */
function subjectIds(raw: string, type: string | undefined): string[] {
  if (raw.includes('_')) return [raw];
  const kinds = type ? [SUBJECT_KINDS[type]].filter((k): k is IdKind => !!k) : Object.values(SUBJECT_KINDS);
  return kinds.map((k) => normalizeId(k, raw)).filter((id): id is string => id !== null);
}

export function assertStatus(status: string | undefined, param = 'status'): OperationStatus | undefined {
  if (status === undefined) return undefined;
  if (!(OPERATION_STATUSES as readonly string[]).includes(status)) {
    throw new DomainError('invalid_status', `Unknown operation status '${status}'; use one of ${OPERATION_STATUSES.join(', ')}`, param);
  }
  return status as OperationStatus;
}

async function findOperation(db: Reader, organizationId: string, id: string, param: string | null = null) {
  const row = isId('operation', id) ? await findOperationOf(db, organizationId, id) : null;
  if (!row) throw missing('operation', id, param);
  return row;
}

/** An operation of the caller's organization by id (the subscription's reads); 404 otherwise. */
async function retrieveOperation(deps: Deps, organizationId: string, id: string): Promise<PublicOperation> {
  return presentOperation(await findOperation(deps.db.prisma, organizationId, id));
}

/**
 * The operation actions (src/domain/action/action.ts): reads only, with
 * `operations:read`, which every token holds. Operations change through the
 * mutations that start them (distributions) and the engine (engine.ts).
 */
export const operations = capability({ name: 'operations', title: 'Operations', resource: 'operations' })({
  /** Newest first, paged backward by creation (ids are time-ordered); `status` is checked here (invalid_status). */
  list: read({
    summary: 'List operations, newest first',
    input: ListOperationsInput,
    output: listOf(Operation),
    run: async ({ caller, input, db }) => {
      const organizationId = caller.organization.id;
      const status = assertStatus(input.status);
      const filter = {
        subjectType: input.subject_type,
        subjectIds: input.subject_id ? subjectIds(input.subject_id, input.subject_type) : undefined,
        status,
        parentOperationId: input.parent_operation_id,
        targetOperationId: input.target_operation_id,
      };
      const page = await newestFirst(
        input,
        (id, param) => findOperation(db, organizationId, id, param),
        (below, take) => operationsPage(db, organizationId, filter, below, take),
      );
      return { ...page, data: page.data.map(presentOperation) };
    },
  }),
  retrieve: read({
    summary: 'Retrieve an operation (poll it until a terminal status)',
    params: ['id'],
    retrieves: 'operation',
    input: NoOperationInput,
    output: Operation,
    run: async ({ caller, params, db }) => presentOperation(await findOperation(db, caller.organization.id, params.id)),
  }),
});

/** Which updates of an operation its subscribers receive: a change of status or of waiting reason. */
const changeOf = (op: PublicOperation) => `${op.status}/${op.waiting_reason}`;

/**
 * One operation as a subscriber follows it: its state now, then each change
 * (`changeOf`) until it is terminal, when the stream ends. An unknown id is
 * resource_missing here, before the stream opens. Changes made in this
 * process arrive at once (the worker's `changed`); another process's are
 * seen by a poll every `pollMs`.
 */
export async function watchOperation(
  deps: Deps,
  organizationId: string,
  id: string,
  pollMs = 1000,
): Promise<AsyncGenerator<PublicOperation>> {
  const first = await retrieveOperation(deps, organizationId, id);
  const stop = new AbortController();
  async function* changes(): AsyncGenerator<PublicOperation> {
    try {
      let op = first;
      let last = '';
      for (;;) {
        if (changeOf(op) !== last) {
          last = changeOf(op);
          yield op;
        }
        if (isTerminal(op.status)) return;
        await (deps.operations?.nextChange(id, pollMs, stop.signal) ?? new Promise((r) => setTimeout(r, pollMs)));
        if (stop.signal.aborted) return;
        op = await retrieveOperation(deps, organizationId, id);
      }
    } finally {
      stop.abort();
    }
  }
  return changes();
}
