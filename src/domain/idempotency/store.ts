import type { PrismaClient } from '../../db/generated/client.ts';
import { Prisma, type Tx } from '../../db/database.ts';
import { statement, type SqlPort } from '../../db/sql-port.ts';

// The idempotency record's SQL: one row per (namespace, key), opened with the effect and completed with its value.

/** The key's record, on the SQL port (every keyed request reads it first). */
const recordStatement = statement<
  [namespace: string, key: string],
  { fingerprint: string; state: string; response_body: unknown; expires_at: Date | string }
>(
  'idempotency_record_get',
  'SELECT fingerprint, state, response_body, expires_at FROM idempotency_record WHERE namespace = $1 AND key = $2',
);

/** The key's record (undefined: none). */
export async function findRecord(sql: SqlPort, namespace: string, key: string) {
  const [row] = await sql.rows(recordStatement, [namespace, key]);
  return row;
}

/** What opening a record writes. */
export interface NewRecord {
  namespace: string;
  key: string;
  fingerprint: string;
  now: Date;
  expiresAt: Date;
}

/** Opens the key's record in a Prisma transaction (dropping an expired one first); a live record fails the insert. */
export async function openRecord(tx: Tx, r: NewRecord): Promise<void> {
  await tx.idempotencyRecord.deleteMany({ where: { namespace: r.namespace, key: r.key, expiresAt: { lte: r.now } } });
  await tx.idempotencyRecord.create({
    data: { namespace: r.namespace, key: r.key, fingerprint: r.fingerprint, createdAt: r.now, expiresAt: r.expiresAt },
  });
}

/** Completes the key's record with the value to replay. */
export async function completeRecord(tx: Tx, namespace: string, key: string, value: unknown): Promise<void> {
  await tx.idempotencyRecord.update({
    where: { namespace_key: { namespace, key } },
    data: { state: 'complete', responseBody: value as object },
  });
}

/** The same opening as statements of a batch: a live record with the key fails the insert on the primary key. */
export function openRecordStatements(r: NewRecord): Prisma.Sql[] {
  return [
    Prisma.sql`DELETE FROM idempotency_record WHERE namespace = ${r.namespace} AND key = ${r.key} AND expires_at <= ${r.now}::timestamptz`,
    Prisma.sql`INSERT INTO idempotency_record (namespace, key, fingerprint, created_at, expires_at)
      VALUES (${r.namespace}, ${r.key}, ${r.fingerprint}, ${r.now}::timestamptz, ${r.expiresAt}::timestamptz)`,
  ];
}

/** The same completion as a statement of a batch. */
export function completeRecordStatement(namespace: string, key: string, value: unknown): Prisma.Sql {
  return Prisma.sql`UPDATE idempotency_record SET state = 'complete', response_body = ${JSON.stringify(value)}::json
    WHERE namespace = ${namespace} AND key = ${key}`;
}

/** Drops records expired at `now`; returns how many. */
export async function purgeExpiredRecords(db: PrismaClient, now: Date): Promise<number> {
  const { count } = await db.idempotencyRecord.deleteMany({ where: { expiresAt: { lte: now } } });
  return count;
}
