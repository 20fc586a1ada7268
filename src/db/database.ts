import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaClient, Prisma } from './generated/client.ts';
import { applyMigrations, migrationsUpToDate } from './schema-engine.ts';
import { pgSqlPort, pgliteSqlPort, tracedSqlPort, type SqlPort } from './sql-port.ts';
import { PROBE_WRITE, readiness } from './readiness.ts';
import { listenOnPool, type PoolListener } from './pool-listen.ts';
import { DEFAULT_GROUP_COMMIT, groupCommitPort, type GroupCommitOptions, type GroupCommitStats } from './group-commit.ts';
import { lockDataDir, type DataDirLock } from './data-dir-lock.ts';

export { Prisma };
export type Tx = Prisma.TransactionClient;

/** Runs statements a store built, in order, in the transaction (a round trip each): for rule code composing stores. */
export async function execute(tx: Tx, statements: Prisma.Sql[]): Promise<void> {
  for (const statement of statements) await tx.$executeRaw(statement);
}

/** Like `execute`, returning each statement's rows. */
export async function queryEach(tx: Tx, statements: Prisma.Sql[]): Promise<Record<string, unknown>[][]> {
  const rows: Record<string, unknown>[][] = [];
  for (const statement of statements) rows.push(await tx.$queryRaw<Record<string, unknown>[]>(statement));
  return rows;
}

export interface Database {
  readonly kind: 'pglite' | 'postgres';
  readonly prisma: PrismaClient;
  /**
   * Runs `fn` in one interactive transaction. Use only the `tx` it receives:
   * in embedded mode the single PGlite connection is held by the open
   * transaction, so touching the outer client inside would wait forever.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` once the transaction that `tx` belongs to has committed (at
   * once when `tx` is not a transaction). Used to wake the event sequencer.
   */
  afterCommit(tx: Tx | PrismaClient, fn: () => void): void;
  /** Applies pending migrations from prisma/migrations; returns the names applied. */
  migrate(): Promise<string[]>;
  /**
   * The hot-path SQL port (sql-port.ts) on the raw driver: typed prepared
   * statements (`rows`) and transactions sent in batches of statements, one
   * round trip each (`transaction`).
   */
  readonly sql: SqlPort;
  /** Readiness for /readyz (readiness.ts): resolves when the database answers and, after a storage fault, accepts writes again. */
  ready(): Promise<void>;
  /** The error mapping saw a storage fault (disk full, I/O error): readiness proves writes until one succeeds (readiness.ts). */
  storageFault(): void;
  /**
   * Refreshes the planner's statistics where nothing else does: PGlite has no autovacuum, so without this its
   * planner never learns a table's size, and a keyset page over a large table (the ledger export's) rescans and
   * sorts everything before it on every page. PostgreSQL's autovacuum analyzes on its own: a no-op there.
   */
  refreshStatistics(): Promise<void>;
  /** Load of the connection (metrics): the pg pool's connections in use, idle and waited for; PGlite's queued transactions. */
  stats(): { inUse?: number; idle?: number; waiting?: number; queued?: number; groupCommit: GroupCommitStats };
  /**
   * PostgreSQL's pool when it reaches PostgreSQL itself: every connection of the pool listens on `channel`, and its
   * statements tell when notifications have arrived (pool-listen.ts). Unset behind a transaction pooler and embedded.
   */
  listenOnPool?(channel: string, listener: PoolListener): void;
  /** PostgreSQL only: the pool (DATABASE_URL), possibly behind a transaction pooler: no session state on it. */
  readonly pool?: pg.Pool;
  /** Embedded only: the PGlite instance (LISTEN/NOTIFY is in-process there). */
  readonly pglite?: PGlite;
  close(): Promise<void>;
}

/** Where the database is: the fields of the configuration (src/config.ts) that say so, so `openDatabase(config)` works. */
export interface DatabaseOptions {
  /** The pool's PostgreSQL (itself or a pooler in front of it); unset: embedded PGlite. */
  databaseUrl?: string;
  /** PostgreSQL itself for what needs a session of its own (migrations); unset: `databaseUrl`. */
  databaseDirectUrl?: string;
  /** `transaction`: the pool is behind a transaction pooler, so the SQL port prepares no named statement. */
  databasePoolMode?: 'session' | 'transaction';
  /** PGlite data directory, or `memory://` for an in-memory database. */
  dataDir: string;
  /** PGlite only: a data directory dump (PGlite's dumpDataDir) to start from instead of an empty cluster. */
  loadDataDir?: Blob;
  poolSize?: number;
  /** Group commit of the batched port's grouped transactions (group-commit.ts). */
  groupCommit?: GroupCommitOptions;
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  const grouping = opts.groupCommit ?? DEFAULT_GROUP_COMMIT;
  return opts.databaseUrl
    ? openPostgres(
        { pool: opts.databaseUrl, direct: opts.databaseDirectUrl ?? opts.databaseUrl, mode: opts.databasePoolMode ?? 'session' },
        opts.poolSize ?? 10,
        grouping,
      )
    : openPglite(opts.dataDir, opts.loadDataDir, grouping);
}

const TX_OPTIONS = { maxWait: 10_000, timeout: 20_000 } as const;

/** Commit hooks per open transaction client. */
function commitHooks(prisma: PrismaClient) {
  const open = new WeakMap<object, (() => void)[]>();
  return {
    run: async <T>(fn: (tx: Tx) => Promise<T>): Promise<T> => {
      const hooks: (() => void)[] = [];
      const result = await prisma.$transaction((tx) => {
        open.set(tx, hooks);
        return fn(tx);
      }, TX_OPTIONS);
      for (const hook of hooks) hook();
      return result;
    },
    afterCommit: (tx: object, fn: () => void) => {
      const hooks = open.get(tx);
      if (hooks) hooks.push(fn);
      else fn();
    },
  };
}

/**
 * The pool may sit behind a transaction pooler (docs/operating/pgbouncer.md): everything on it is a single
 * statement or a transaction, Prisma's statements are unnamed, the SQL port's are too in that mode, and the only
 * advisory locks are transaction-scoped. Migrations (the schema engine holds a session advisory lock while it
 * applies them) connect to PostgreSQL itself, as the LISTEN connections do (src/runtime/listener.ts).
 */
async function openPostgres(
  url: { pool: string; direct: string; mode: 'session' | 'transaction' },
  poolSize: number,
  grouping: GroupCommitOptions,
): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url.pool, max: poolSize });
  pool.on('error', () => {}); // idle-client errors surface on the next query instead
  const factory = new PrismaPg(pool);
  const prisma = new PrismaClient({ adapter: factory });
  const hooks = commitHooks(prisma);
  const sql = groupCommitPort(tracedSqlPort(pgSqlPort(pool, url.mode === 'transaction' ? 'unnamed' : 'named')), grouping);
  const { ready, storageFault } = readiness(
    async () => {
      await pool.query('select 1');
    },
    async () => {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        await client.query(PROBE_WRITE);
      } finally {
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        client.release(broken); // a connection that cannot roll back is discarded, never reused mid-transaction
      }
    },
  );
  return {
    kind: 'postgres',
    prisma,
    pool,
    sql,
    listenOnPool: url.mode === 'transaction' ? undefined : (channel, listener) => listenOnPool(pool, channel, listener),
    transaction: hooks.run,
    afterCommit: hooks.afterCommit,
    migrate: async () =>
      (await migrationsUpToDate(async (sql) => (await pool.query(sql)).rows))
        ? []
        : applyMigrations(new PrismaPg({ connectionString: url.direct, max: 1 })),
    ready,
    storageFault,
    refreshStatistics: async () => {},
    stats: () => ({
      inUse: pool.totalCount - pool.idleCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      groupCommit: sql.groupStats,
    }),
    close: async () => {
      await prisma.$disconnect();
      await pool.end().catch(() => {});
    },
  };
}

/**
 * The embedded database's files are the owner's alone. PGlite (Emscripten's
 * NODEFS) creates its files mode 0666 whatever the umask, so the directory is
 * made (or narrowed to) 0700 before it opens, which no other user can enter,
 * and group/other bits are dropped from every file at open and at close.
 */
function ownerOnly(path: string, isDir = true): void {
  const mode = lstatSync(path).mode & 0o777;
  if (isDir) {
    if (mode !== 0o700) chmodSync(path, 0o700); // EPERM (a directory this user does not own) stops the start: say so rather than run exposed
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.isDirectory()) ownerOnly(join(path, entry.name));
      else if (entry.isFile()) ownerOnly(join(path, entry.name), false);
    }
  } else if (mode & 0o077) chmodSync(path, mode & 0o700);
}

async function openPglite(dataDir: string, loadDataDir: Blob | undefined, grouping: GroupCommitOptions): Promise<Database> {
  const onDisk = dataDir !== 'memory://';
  // Locked before anything reads or writes it: a second process stops here (data-dir-lock.ts).
  const lock: DataDirLock | undefined = onDisk ? await lockDataDir(dataDir) : undefined;
  const client = await openPgliteClient(dataDir, loadDataDir).catch(async (err) => {
    await lock?.release();
    throw err;
  });
  const factory: SqlMigrationAwareDriverAdapterFactory = new PrismaPGlite(client);
  const prisma = new PrismaClient({ adapter: factory });
  const hooks = commitHooks(prisma);
  // PGlite is one connection: concurrent interactive transactions fail with
  // P2028 instead of queueing, so embedded mode runs them one at a time.
  // PGlite also runs on this thread and its queue moves on promises alone:
  // queued transactions would run back to back without a turn of the event
  // loop, and I/O (requests arriving, responses and stream frames leaving,
  // the reads a request makes before its transaction) would wait until the
  // queue ran dry; a run handing on to its next step at its commit kept it
  // full (bench/HISTORY.md, PGlite p99). Each transaction waits for pending
  // I/O first.
  let tail: Promise<unknown> = Promise.resolve();
  let queued = 0;
  const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));
  const serialize = <T>(fn: () => Promise<T>): Promise<T> => {
    queued++;
    const run = tail.then(yieldToIo).then(fn);
    tail = run.catch(() => {}).finally(() => queued--);
    return run;
  };
  const transaction = <T>(fn: (tx: Tx) => Promise<T>): Promise<T> => serialize(() => hooks.run(fn));
  const sql = groupCommitPort(tracedSqlPort(pgliteSqlPort(client, serialize)), grouping);
  const { ready, storageFault } = readiness(
    async () => {
      await client.query('select 1');
    },
    () =>
      serialize(() =>
        client.transaction(async (tx) => {
          await tx.exec(PROBE_WRITE);
          await tx.rollback();
        }),
      ),
  );
  return {
    kind: 'pglite',
    prisma,
    pglite: client,
    sql,
    transaction,
    afterCommit: hooks.afterCommit,
    migrate: async () => ((await migrationsUpToDate(async (sql) => (await client.query(sql)).rows)) ? [] : applyMigrations(factory)),
    ready,
    storageFault,
    // In the transaction queue like any write: ANALYZE runs on this thread, between requests' transactions.
    refreshStatistics: () =>
      serialize(async () => {
        await client.exec('ANALYZE');
      }),
    stats: () => ({ queued, groupCommit: sql.groupStats }),
    close: async () => {
      await prisma.$disconnect();
      await client.close();
      if (onDisk) ownerOnly(dataDir);
      await lock?.release();
    },
  };
}

async function openPgliteClient(dataDir: string, loadDataDir: Blob | undefined): Promise<PGlite> {
  if (dataDir !== 'memory://') ownerOnly(dataDir); // the lock made it, 0700, if it was missing
  const client = new PGlite(dataDir, { loadDataDir });
  await client.waitReady;
  return client;
}
