import type pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';

/**
 * The hand-written SQL port for hot paths: named, typed statements run on the
 * raw driver, without Prisma's query engine and the objects it makes per
 * query. On PostgreSQL a statement is a named prepared statement on the pool
 * (parsed and planned once per connection); embedded, it runs on the PGlite
 * instance, whose queries wait for any open interactive transaction, exactly
 * like Prisma's own reads there. Prisma stays for the model and the long tail.
 *
 * A statement declares its parameter and row types once, beside its SQL;
 * callers get typed rows. Columns come back as the driver parses them: int8
 * as a string from pg and a number or bigint from PGlite, so statements cast
 * or callers convert (`Number(...)`) where the two differ.
 */
export interface Statement<P extends readonly unknown[], R> {
  readonly name: string;
  readonly text: string;
  /** Carries the types only; never set. */
  readonly types?: { params: P; row: R };
}

export function statement<P extends readonly unknown[], R>(name: string, text: string): Statement<P, R> {
  return { name, text };
}

export interface SqlPort {
  rows<P extends readonly unknown[], R>(s: Statement<P, R>, params: P): Promise<R[]>;
}

export function pgSqlPort(pool: pg.Pool): SqlPort {
  return {
    rows: async (s, params) => (await pool.query({ name: s.name, text: s.text, values: params as unknown as unknown[] })).rows,
  };
}

export function pgliteSqlPort(client: PGlite): SqlPort {
  return {
    rows: async <P extends readonly unknown[], R>(s: Statement<P, R>, params: P) => (await client.query<R>(s.text, params as unknown as unknown[])).rows,
  };
}
