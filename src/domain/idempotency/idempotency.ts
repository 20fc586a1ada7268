import { createHash } from 'node:crypto';
import type { BatchSend } from '../../db/sql-port.ts';
import type { Prisma, Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, isUniqueViolation } from '../errors.ts';
import {
  completeRecord,
  completeRecordStatement,
  findRecord,
  openRecord,
  openRecordStatements,
  purgeExpiredRecords,
  type NewRecord,
} from './store.ts';

/**
 * Idempotency-Key handling, one lifecycle for both surfaces.
 *
 * The key's record is inserted at the START of the same transaction that
 * performs the effect and is completed with the response at its end. A
 * concurrent request with the same key therefore blocks on the unique index
 * (PostgreSQL) or queues behind the transaction (embedded mode), then finds
 * the committed record and replays it: N concurrent requests, one effect.
 * A failed effect rolls the record back, so only successful responses are
 * stored and a failed request may be retried with the same key.
 */
export interface IdempotencyRequest {
  /** Who owns the key space, e.g. `b:<org id>`; keys never collide across organizations. */
  namespace: string;
  key: string;
  /** Canonical hash of what the key was first used for; a different request with the key is refused. */
  fingerprint: string;
}

/**
 * What a record holds: the value its caller stored (for an action, its value
 * and outcome: src/domain/action/action.ts), never a transport's response, so
 * each front renders a replay its own way. One format: the migration
 * 20261127200000_idempotency_one_format converted the REST responses older
 * versions stored (docs/adr/0011-idempotency-record-format.md).
 */
type Replay = { value: unknown; replayed: true };

export const IDEMPOTENCY_KEY_MAX = 255;

export function validateIdempotencyKey(key: string | undefined, param = 'Idempotency-Key'): string | undefined {
  if (key === undefined) return undefined;
  if (key.length < 1 || key.length > IDEMPOTENCY_KEY_MAX || !/^[\x21-\x7e]+$/.test(key)) {
    throw new DomainError('invalid_request', `${param} must be 1 to ${IDEMPOTENCY_KEY_MAX} printable ASCII characters`, param);
  }
  return key;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export function fingerprint(...parts: unknown[]): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(parts)))
    .digest('hex');
}

/** The stored response of an earlier request with the key, a conflict if the key was used for another request, or nothing. */
async function replay(deps: Deps, req: IdempotencyRequest, conflictCode: ConflictCode): Promise<Replay | undefined> {
  const row = await findRecord(deps.db.sql, req.namespace, req.key);
  if (!row || new Date(row.expires_at) <= deps.clock.now()) return undefined;
  if (row.fingerprint !== req.fingerprint) {
    throw new DomainError(
      conflictCode,
      `Idempotency-Key '${req.key}' was already used with a different request; use a new key for a new request`,
      'Idempotency-Key',
    );
  }
  if (row.state !== 'complete') throw keyInUse(req);
  return { value: row.response_body, replayed: true };
}

type ConflictCode = 'idempotency_key_conflict' | 'idempotency_key_reused';

/** A concurrent request inserted the key first: replay it once committed, or say it is still running. */
async function lostRace(deps: Deps, req: IdempotencyRequest, conflictCode: ConflictCode, e: unknown): Promise<Replay> {
  if (!isUniqueViolation(e)) throw e;
  const winner = await replay(deps, req, conflictCode);
  if (winner) return winner;
  throw keyInUse(req);
}

const keyInUse = (req: IdempotencyRequest) =>
  new DomainError('idempotency_key_in_use', `A request with Idempotency-Key '${req.key}' is still in progress`, 'Idempotency-Key');

/**
 * The lifecycle in a Prisma transaction: the record stores the effect's
 * value, so a key replays the same value whichever front used it first, each
 * front rendering it its way.
 */
export async function runIdempotentValue<T>(
  deps: Deps,
  req: IdempotencyRequest | undefined,
  effect: (tx: Tx) => Promise<T>,
  conflictCode: ConflictCode = 'idempotency_key_conflict',
): Promise<{ value: T; replayed: boolean }> {
  if (!req) return { value: await deps.db.transaction(effect), replayed: false };
  const earlier = await replay(deps, req, conflictCode);
  if (earlier) return earlier as { value: T; replayed: true };
  try {
    const response = await deps.db.transaction(async (tx) => {
      await openRecord(tx, newRecord(deps, req));
      const result = await effect(tx);
      await completeRecord(tx, req.namespace, req.key, result);
      return result;
    });
    return { value: response, replayed: false };
  } catch (e) {
    return (await lostRace(deps, req, conflictCode, e)) as { value: T; replayed: true };
  }
}

/** What an effect on the batched SQL port hands back: the value to store, and the statements that still have to run before the commit. */
export interface BatchedResult<T> {
  value: T;
  finish: Prisma.Sql[];
  /** Whether it appended events (handed back after the commit: the action runner announces them). */
  appended: boolean;
  /** Runs once the transaction has committed (not on a replay), e.g. starting an operation leased to this process. */
  committed?: () => void;
  /** Exclusive keys the commit's batch names, in a grouped transaction (src/db/group-commit.ts). */
  keys?: readonly string[];
}

/**
 * The same lifecycle on the batched SQL port (src/db/sql-port.ts), storing
 * the effect's value like runIdempotentValue: the record's insert rides in
 * the effect's first batch, its completion in the last one with the commit,
 * so a new key adds no round trip at all. The replay lookup comes after a
 * failure instead of before every request: a key already used fails the
 * insert (or the effect failed first, e.g. validation that no longer holds),
 * nothing was changed, and the stored answer (or the key's conflict) is
 * what the caller gets, exactly as a lookup first would have answered.
 */
export async function runIdempotentBatched<T>(
  deps: Deps,
  req: IdempotencyRequest | undefined,
  effect: (send: BatchSend) => Promise<BatchedResult<T>>,
  /** Awaited before the commit is sent: a provisional caller's confirmation (request-auth.ts); its rejection rolls everything back. */
  beforeCommit?: () => Promise<void>,
  /** May share its commit with concurrent writers (src/db/group-commit.ts): the effect names its exclusive keys. */
  group = false,
): Promise<{ value: T; replayed: boolean; appended: boolean }> {
  const conflictCode: ConflictCode = 'idempotency_key_conflict';
  try {
    const result = await deps.db.sql.transaction(
      async (send) => {
        let prelude = req ? openRecordStatements(newRecord(deps, req)) : [];
        let preludeKeys = req ? [`idempotency:${req.namespace}:${req.key}`] : [];
        const out = await effect(async (statements, opts) => {
          const rows = await send([...prelude, ...statements], { ...opts, keys: [...preludeKeys, ...(opts?.keys ?? [])] });
          const skip = prelude.length;
          prelude = [];
          preludeKeys = [];
          return rows.slice(skip);
        });
        await beforeCommit?.();
        await send([...prelude, ...out.finish, ...(req ? [completeRecordStatement(req.namespace, req.key, out.value)] : [])], {
          commit: true,
          keys: [...preludeKeys, ...(out.keys ?? [])],
        });
        return out;
      },
      { group },
    );
    result.committed?.();
    return { value: result.value, replayed: false, appended: result.appended };
  } catch (e) {
    if (!req) throw e;
    const earlier = await replay(deps, req, conflictCode);
    if (earlier) return { value: (earlier as { value: T }).value, replayed: true, appended: false };
    if (isUniqueViolation(e)) throw keyInUse(req);
    throw e;
  }
}

/** The key's record as opened now, expiring after the TTL. */
function newRecord(deps: Deps, req: IdempotencyRequest): NewRecord {
  const now = deps.clock.now();
  return { ...req, now, expiresAt: new Date(now.getTime() + deps.config.idempotencyTtlSeconds * 1000) };
}

/** Drops records past their TTL; run periodically by the maintenance worker. */
export async function purgeExpiredIdempotencyRecords(deps: Deps): Promise<number> {
  return purgeExpiredRecords(deps.db.prisma, deps.clock.now());
}
