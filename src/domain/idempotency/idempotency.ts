import { createHash } from 'node:crypto';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, isUniqueViolation } from '../errors.ts';

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

export interface StoredResponse {
  status: number;
  body: unknown;
}

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
  return createHash('sha256').update(JSON.stringify(canonical(parts))).digest('hex');
}

export async function runIdempotent(
  deps: Deps,
  req: IdempotencyRequest | undefined,
  effect: (tx: Tx) => Promise<StoredResponse>,
  conflictCode: 'idempotency_key_conflict' | 'idempotency_key_reused' = 'idempotency_key_conflict',
): Promise<StoredResponse & { replayed: boolean }> {
  if (!req) return { ...(await deps.db.transaction(effect)), replayed: false };

  const replay = async (): Promise<(StoredResponse & { replayed: boolean }) | undefined> => {
    const row = await deps.db.prisma.idempotencyRecord.findUnique({ where: { namespace_key: { namespace: req.namespace, key: req.key } } });
    if (!row || row.expiresAt <= deps.clock.now()) return undefined;
    if (row.fingerprint !== req.fingerprint) {
      throw new DomainError(
        conflictCode,
        `Idempotency-Key '${req.key}' was already used with a different request; use a new key for a new request`,
        'Idempotency-Key',
      );
    }
    if (row.state !== 'complete') {
      throw new DomainError('idempotency_key_in_use', `A request with Idempotency-Key '${req.key}' is still in progress`, 'Idempotency-Key');
    }
    return { status: row.responseStatus!, body: row.responseBody, replayed: true };
  };

  const earlier = await replay();
  if (earlier) return earlier;
  try {
    const response = await deps.db.transaction(async (tx) => {
      const now = deps.clock.now();
      await tx.idempotencyRecord.deleteMany({ where: { namespace: req.namespace, key: req.key, expiresAt: { lte: now } } });
      await tx.idempotencyRecord.create({
        data: {
          namespace: req.namespace,
          key: req.key,
          fingerprint: req.fingerprint,
          createdAt: now,
          expiresAt: new Date(now.getTime() + deps.config.idempotencyTtlSeconds * 1000),
        },
      });
      const result = await effect(tx);
      await tx.idempotencyRecord.update({
        where: { namespace_key: { namespace: req.namespace, key: req.key } },
        data: { state: 'complete', responseStatus: result.status, responseBody: result.body as object },
      });
      return result;
    });
    return { ...response, replayed: false };
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    const winner = await replay();
    if (winner) return winner;
    throw new DomainError('idempotency_key_in_use', `A request with Idempotency-Key '${req.key}' is still in progress`, 'Idempotency-Key');
  }
}

/** Drops records past their TTL; run periodically by the maintenance worker. */
export async function purgeExpiredIdempotencyRecords(deps: Deps): Promise<number> {
  const { count } = await deps.db.prisma.idempotencyRecord.deleteMany({ where: { expiresAt: { lte: deps.clock.now() } } });
  return count;
}
