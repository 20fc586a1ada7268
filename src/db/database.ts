import { mkdirSync } from 'node:fs';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaClient, Prisma } from './generated/client.ts';
import { applyMigrations } from './schema-engine.ts';

export { Prisma };
export type Tx = Prisma.TransactionClient;

export interface Database {
  readonly kind: 'pglite' | 'postgres';
  readonly prisma: PrismaClient;
  /**
   * Runs `fn` in one interactive transaction. Use only the `tx` it receives:
   * in embedded mode the single PGlite connection is held by the open
   * transaction, so touching the outer client inside would wait forever.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Applies pending migrations from prisma/migrations; returns the names applied. */
  migrate(): Promise<string[]>;
  /** Cheap liveness query used by /readyz. */
  ping(): Promise<void>;
  /** PostgreSQL only: a pool for LISTEN/NOTIFY and hand-written hot paths. */
  readonly pool?: pg.Pool;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** PGlite data directory, or `memory://` for an in-memory database. */
  dataDir: string;
  poolSize?: number;
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts.poolSize ?? 10) : openPglite(opts.dataDir);
}

const TX_OPTIONS = { maxWait: 10_000, timeout: 20_000 } as const;

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', () => {}); // idle-client errors surface on the next query instead
  const factory = new PrismaPg(pool);
  const prisma = new PrismaClient({ adapter: factory });
  return {
    kind: 'postgres',
    prisma,
    pool,
    transaction: (fn) => prisma.$transaction(fn, TX_OPTIONS),
    migrate: () => applyMigrations(new PrismaPg({ connectionString: url, max: 1 })),
    ping: async () => {
      await pool.query('select 1');
    },
    close: async () => {
      await prisma.$disconnect();
      await pool.end().catch(() => {});
    },
  };
}

async function openPglite(dataDir: string): Promise<Database> {
  if (dataDir !== 'memory://') mkdirSync(dataDir, { recursive: true });
  const client = dataDir === 'memory://' ? new PGlite() : new PGlite(dataDir);
  await client.waitReady;
  const factory: SqlMigrationAwareDriverAdapterFactory = new PrismaPGlite(client);
  const prisma = new PrismaClient({ adapter: factory });
  // PGlite is one connection: concurrent interactive transactions fail with
  // P2028 instead of queueing, so embedded mode runs them one at a time.
  let tail: Promise<unknown> = Promise.resolve();
  const transaction = <T>(fn: (tx: Tx) => Promise<T>): Promise<T> => {
    const run = tail.then(() => prisma.$transaction(fn, TX_OPTIONS));
    tail = run.catch(() => {});
    return run;
  };
  return {
    kind: 'pglite',
    prisma,
    transaction,
    migrate: () => applyMigrations(factory),
    ping: async () => {
      await client.query('select 1');
    },
    close: async () => {
      await prisma.$disconnect();
      await client.close();
    },
  };
}
