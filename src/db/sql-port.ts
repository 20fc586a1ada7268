import type pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import type { Prisma } from './generated/client.ts';

/**
 * The one hand-written SQL port for hot paths, on the raw driver, without
 * Prisma's query engine and the objects it makes per query. Prisma stays for
 * the model and the long tail. Two shapes, one port (`db.sql`), the same on
 * PostgreSQL and embedded PGlite:
 *
 * - `rows(statement, params)`: one named, typed statement, autocommitted. On
 *   PostgreSQL a named prepared statement on the pool (parsed and planned once
 *   per connection); embedded, it runs on the PGlite instance, whose queries
 *   wait for any open interactive transaction, exactly like Prisma's own reads
 *   there. A statement declares its parameter and row types once, beside its
 *   SQL; callers get typed rows. Columns come back as the driver parses them:
 *   int8 as a string from pg and a number or bigint from PGlite, so statements
 *   cast or callers convert (`Number(...)`) where the two differ.
 *
 * - `transaction(fn)`: one transaction whose statements travel in batches, one
 *   round trip per batch. A batch is a multi-statement simple query, the one
 *   protocol message that both PostgreSQL and PGlite run as several
 *   statements at once; under READ COMMITTED each statement still takes a
 *   fresh snapshot, so a statement after a row lock sees what the previous
 *   holder committed. The simple protocol has no parameters, so batch
 *   statements are `Prisma.sql` templates (the same ones `$queryRaw` takes)
 *   whose values are inlined here as escaped literals, in one place. `send`
 *   returns each statement's rows. The first batch opens the transaction;
 *   `{ commit: true }` closes it in the same message (otherwise the port
 *   commits after `fn`); any error rolls it back.
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

export type BatchSend = (statements: Prisma.Sql[], opts?: { commit?: boolean }) => Promise<Record<string, unknown>[][]>;

export interface SqlPort {
  rows<P extends readonly unknown[], R>(s: Statement<P, R>, params: P): Promise<R[]>;
  transaction<T>(fn: (send: BatchSend) => Promise<T>): Promise<T>;
}

/** A value as a SQL literal: E'' strings (backslashes and quotes escaped whatever standard_conforming_strings says), NULL, TRUE/FALSE. */
export function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'number' && !Number.isFinite(v)) throw new TypeError(`not a finite number: ${v}`);
  const s = v instanceof Date ? v.toISOString() : typeof v === 'object' ? JSON.stringify(v) : String(v);
  // A NUL would end the protocol message's query string early; PostgreSQL refuses NUL in text anyway.
  if (s.includes('\0')) throw new TypeError('text values cannot contain NUL');
  return `E'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

export function inline(sql: Prisma.Sql): string {
  let out = sql.strings[0]!;
  for (let i = 0; i < sql.values.length; i++) out += literal(sql.values[i]) + sql.strings[i + 1];
  return out;
}

const script = (statements: string[]) => statements.join(';\n');

export function pgSqlPort(pool: pg.Pool): SqlPort {
  return {
    rows: async (s, params) => (await pool.query({ name: s.name, text: s.text, values: params as unknown as unknown[] })).rows,
    transaction: async (fn) => {
      const client = await pool.connect();
      // A checked-out client has no listener of the pool's: a connection lost between two batches (a database
      // restart) would be an unhandled 'error' event and end the process. Kept here, it fails the next batch.
      let lost: Error | undefined;
      const onError = (err: Error) => (lost ??= err);
      client.on('error', onError);
      let open = false;
      try {
        const result = await fn(async (statements, opts) => {
          const begin = open ? [] : ['BEGIN'];
          const text = script([...begin, ...statements.map(inline), ...(opts?.commit ? ['COMMIT'] : [])]);
          open = true;
          const res = (await client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
          if (opts?.commit) open = false;
          const all = Array.isArray(res) ? res : [res];
          return all.slice(begin.length, begin.length + statements.length).map((r) => r.rows);
        });
        if (open) await client.query('COMMIT');
        open = false;
        client.off('error', onError);
        client.release(lost);
        return result;
      } catch (e) {
        // After a failed batch the transaction may be open and aborted, or already gone: ROLLBACK is safe either way.
        const broken = lost ?? (await client.query('ROLLBACK').then(
          () => undefined,
          (err: Error) => err,
        ));
        client.off('error', onError);
        client.release(broken);
        throw e;
      }
    },
  };
}

/**
 * PGlite is one connection: a transaction holds it (its transaction mutex, and `serialize`, which the
 * database passes so that these transactions queue with Prisma's) from the first statement to the commit.
 */
export function pgliteSqlPort(client: PGlite, serialize: <T>(run: () => Promise<T>) => Promise<T> = (run) => run()): SqlPort {
  return {
    rows: async <P extends readonly unknown[], R>(s: Statement<P, R>, params: P) => (await client.query<R>(s.text, params as unknown as unknown[])).rows,
    transaction: (fn) =>
      serialize(() =>
        client.transaction((tx) =>
          fn(async (statements) => {
            if (!statements.length) return [];
            const results = await tx.exec(script(statements.map(inline)));
            return results.map((r) => r.rows as Record<string, unknown>[]);
          }),
        ),
      ),
  };
}
