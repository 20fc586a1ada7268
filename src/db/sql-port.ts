import pg from 'pg';
import { createHash } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { tracing } from '../tracing.ts';
import { Prisma } from './generated/client.ts';

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
 *   round trip per batch. Batch statements are `Prisma.sql` templates (the
 *   same ones `$queryRaw` takes); `send` returns each statement's rows. The
 *   first batch opens the transaction; `{ commit: true }` closes it in the
 *   same round trip (otherwise the port commits after `fn`); any error rolls
 *   it back. Statements run in order and an error skips the rest of the
 *   batch; under READ COMMITTED each statement takes a fresh snapshot, so a
 *   statement after a row lock sees what the previous holder committed.
 *   On PostgreSQL a batch is one pipelined extended-protocol message train
 *   (Parse when new, Bind, Describe, Execute per statement, one Sync),
 *   written at once: each distinct statement text is a named prepared
 *   statement, parsed once per connection and planned from its cached plan
 *   (ADR 0003), its values sent as parameters. Embedded, a batch is one
 *   multi-statement simple query (PGlite runs in-process: no round trip to
 *   save, nothing to pipeline) with the values inlined as escaped literals.
 *
 * Behind a transaction pooler (PgBouncer's transaction mode, `DATABASE_POOL_MODE=transaction`) consecutive
 * transactions of one pool connection may run on different backends, where a statement prepared on another one
 * does not exist: there every statement is unnamed (Parse, Bind, Describe, Execute in the same message train, so a
 * batch is still one round trip), parsed and planned on each run (docs/operating/pgbouncer.md).
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

/** A named statement with its values as a statement of a batch (`transaction`'s `send`): the same text, each `$n` bound. */
export function inBatch<P extends readonly unknown[], R>(s: Statement<P, R>, params: P): Prisma.Sql {
  const parts = s.text.split(/\$(\d+)/);
  return new Prisma.Sql(
    parts.filter((_, i) => i % 2 === 0),
    parts.filter((_, i) => i % 2 === 1).map((n) => params[Number(n) - 1]),
  );
}

export interface BatchOptions {
  /** Closes the transaction in the batch's round trip. */
  commit?: boolean;
  /**
   * A grouped transaction's exclusive keys (group-commit.ts): what the batch locks or otherwise needs alone, e.g.
   * `entity:<id>`. Named with the first batch they keep a member out of any group in flight holding one of them;
   * named later, another member of its group holding one rolls the group back. Ignored outside a group.
   */
  keys?: readonly string[];
}

export type BatchSend = (statements: Prisma.Sql[], opts?: BatchOptions) => Promise<Record<string, unknown>[][]>;

export interface TransactionOptions {
  /**
   * May share its database transaction with concurrent ones (group-commit.ts): the body names its exclusive keys
   * with its batches and is safe to run twice.
   */
  group?: boolean;
}

export interface SqlPort {
  rows<P extends readonly unknown[], R>(s: Statement<P, R>, params: P): Promise<R[]>;
  transaction<T>(fn: (send: BatchSend) => Promise<T>, opts?: TransactionOptions): Promise<T>;
}

/** A value as batch text (Dates as ISO instants, objects as JSON): a parameter on PostgreSQL, inside a literal embedded. */
function parameter(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number' && !Number.isFinite(v)) throw new TypeError(`not a finite number: ${v}`);
  const s = v instanceof Date ? v.toISOString() : typeof v === 'object' ? JSON.stringify(v) : String(v);
  // A NUL would end the protocol message's query string early; PostgreSQL refuses NUL in text anyway.
  if (s.includes('\0')) throw new TypeError('text values cannot contain NUL');
  return s;
}

/** A value as a SQL literal: E'' strings (backslashes and quotes escaped whatever standard_conforming_strings says), NULL, TRUE/FALSE. */
export function literal(v: unknown): string {
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  const s = parameter(v);
  return s === null ? 'NULL' : `E'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

export function inline(sql: Prisma.Sql): string {
  let out = sql.strings[0]!;
  for (let i = 0; i < sql.values.length; i++) out += literal(sql.values[i]) + sql.strings[i + 1];
  return out;
}

const script = (statements: string[]) => statements.join(';\n');

/** A statement as the pipeline sends it: `Prisma.Sql`'s text with $n placeholders, and its values. */
type Parameterized = { readonly text: string; readonly values: readonly unknown[] };
const BEGIN: Parameterized = { text: 'BEGIN', values: [] };
const COMMIT: Parameterized = { text: 'COMMIT', values: [] };

/** Statement names by text: each distinct batch statement is prepared once per connection under its name. */
const names = new Map<string, string>();
/** Past this many distinct texts (a caller building texts from data), statements go unnamed: parsed each time. */
const MAX_NAMES = 500;
function nameOf(text: string, named: boolean): string {
  if (!named) return '';
  let name = names.get(text);
  if (name === undefined) {
    if (names.size >= MAX_NAMES) return '';
    name = `batch_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    names.set(text, name);
  }
  return name;
}

/** The statement names prepared on each connection (pg's Connection object), recorded as their Parse completes. */
const prepared = new WeakMap<object, Set<string>>();

type Field = { name: string; dataTypeID: number };
interface PgConnection {
  stream: { cork?(): void; uncork?(): void };
  parse(q: { name: string; text: string; types: number[] }): void;
  bind(c: { portal: string; statement: string; values: (string | null)[] }): void;
  describe(c: { type: 'P'; name: string }): void;
  execute(c: { portal: string }): void;
  sync(): void;
  sendCopyFail(msg: string): void;
  on(event: 'parseComplete', fn: () => void): void;
  off(event: 'parseComplete', fn: () => void): void;
}

/**
 * One batch as a node-postgres Submittable (the driver's extension point for
 * custom protocol flows, as pg-cursor uses it): every statement's messages
 * corked into one write, one Sync, the rows of each statement in order. An
 * error makes PostgreSQL skip to the Sync; the batch fails with it.
 */
class Pipeline {
  private results: Record<string, unknown>[][] = [];
  private rows: Record<string, unknown>[] = [];
  private fields: Field[] = [];
  private parsers: ((v: string) => unknown)[] = [];
  private parsing: string[] = [];
  private parsed = 0;
  private connection: PgConnection | undefined;
  private readonly onParse = () => {
    const name = this.parsing[this.parsed++];
    if (name) prepared.get(this.connection!)!.add(name);
  };
  readonly done: Promise<Record<string, unknown>[][]>;
  private settle!: { resolve(r: Record<string, unknown>[][]): void; reject(e: unknown): void };

  /** Values are converted before anything is written, so a value that cannot be sent fails the batch, not the connection. */
  private readonly params: (string | null)[][];

  constructor(
    private readonly statements: Parameterized[],
    private readonly named: boolean,
  ) {
    this.params = statements.map((s) => s.values.map(parameter));
    this.done = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  /** The batch's statements and values, as a query config shows them (logs, tests counting round trips). */
  get text(): string {
    return this.statements.map((s) => s.text).join(';\n');
  }
  get values(): unknown[] {
    return this.statements.flatMap((s) => s.values);
  }

  submit(connection: PgConnection): null {
    this.connection = connection;
    let known = prepared.get(connection);
    if (!known) prepared.set(connection, (known = new Set()));
    connection.on('parseComplete', this.onParse);
    connection.stream.cork?.();
    try {
      this.statements.forEach((s, i) => {
        const text = s.text;
        const name = nameOf(text, this.named);
        if (!name || !(known.has(name) || this.parsing.includes(name))) {
          connection.parse({ name, text, types: [] });
          this.parsing.push(name);
        }
        connection.bind({ portal: '', statement: name, values: this.params[i]! });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '' });
      });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(msg: { fields: Field[] }) {
    this.fields = msg.fields;
    this.parsers = msg.fields.map((f) => pg.types.getTypeParser(f.dataTypeID, 'text'));
  }

  handleDataRow(msg: { fields: (string | null)[] }) {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < this.fields.length; i++) {
      const v = msg.fields[i];
      row[this.fields[i]!.name] = v == null ? null : this.parsers[i]!(v);
    }
    this.rows.push(row);
  }

  handleCommandComplete() {
    this.results.push(this.rows);
    this.rows = [];
    this.fields = [];
  }

  handleEmptyQuery() {
    this.handleCommandComplete();
  }

  handleError(err: unknown) {
    this.connection?.off('parseComplete', this.onParse);
    this.settle.reject(err);
  }

  handleReadyForQuery() {
    this.connection!.off('parseComplete', this.onParse);
    this.settle.resolve(this.results);
  }

  handlePortalSuspended() {}

  handleCopyInResponse(connection: PgConnection) {
    connection.sendCopyFail('COPY is not supported in a batch');
  }

  handleCopyData() {}
}

function pipeline(client: pg.PoolClient, statements: Parameterized[], named: boolean): Promise<Record<string, unknown>[][]> {
  const p = new Pipeline(statements, named);
  client.query(p as unknown as pg.QueryConfig);
  return p.done;
}

/**
 * How statements reach PostgreSQL: `named` (the default) prepares each statement once per connection; `unnamed`
 * parses it on every run, for a pool behind a transaction pooler.
 */
export type StatementMode = 'named' | 'unnamed';

export function pgSqlPort(pool: pg.Pool, mode: StatementMode = 'named'): SqlPort {
  const named = mode === 'named';
  return {
    rows: async (s, params) =>
      (await pool.query({ name: named ? s.name : undefined, text: s.text, values: params as unknown as unknown[] })).rows,
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
          const begin = open ? [] : [BEGIN];
          open = true;
          const all = await pipeline(client, [...begin, ...statements, ...(opts?.commit ? [COMMIT] : [])], named);
          if (opts?.commit) open = false;
          return all.slice(begin.length, begin.length + statements.length);
        });
        if (open) await client.query('COMMIT');
        open = false;
        client.off('error', onError);
        client.release(lost);
        return result;
      } catch (e) {
        // After a failed batch the transaction may be open and aborted, or already gone: ROLLBACK is safe either way.
        const broken =
          lost ??
          (await client.query('ROLLBACK').then(
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
    rows: async <P extends readonly unknown[], R>(s: Statement<P, R>, params: P) =>
      (await client.query<R>(s.text, params as unknown as unknown[])).rows,
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

/**
 * The port with a span per statement and per batch when tracing is on (src/tracing.ts): named `db <statement name>`
 * or `db batch`, the statement text (placeholders, never values) as `db.query.text`. Off, each call is passed through.
 */
export function tracedSqlPort(port: SqlPort): SqlPort {
  const client = { kind: 'client' } as const;
  const traceSend =
    (send: BatchSend): BatchSend =>
    (statements, opts) =>
      tracing.span(
        'db batch',
        {
          'db.system.name': 'postgresql',
          'db.operation.batch.size': statements.length,
          'db.query.text': statements
            .map((s) => s.text)
            .join(';\n')
            .slice(0, 4000),
          'db.transaction.commit': opts?.commit ?? false,
        },
        () => send(statements, opts),
        client,
      );
  return {
    rows: (s, params) =>
      tracing.enabled
        ? tracing.span(
            `db ${s.name}`,
            { 'db.system.name': 'postgresql', 'db.query.text': s.text, 'db.statement.name': s.name },
            () => port.rows(s, params),
            client,
          )
        : port.rows(s, params),
    transaction: (fn, opts) => port.transaction((send) => fn(tracing.enabled ? traceSend(send) : send), opts),
  };
}
