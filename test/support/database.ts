import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { inject } from 'vitest';
import type { Config } from '../../src/config.ts';
import { adminQuery } from './global-setup.ts';

/**
 * The database a test file runs on: in-memory PGlite by default, or (when
 * TEST_DATABASE_URL names a PostgreSQL cluster, as `.ci/run` does) a fresh
 * database created for this file and dropped afterwards. Both start as a copy
 * of the run's migrated template (test/support/global-setup.ts).
 *
 * With TEST_DATABASE_POOLER_URL too (a PgBouncer in transaction mode in front of that cluster, `.ci/pgbouncer`), the
 * servers' pools reach the same database through the pooler: `databaseConfig` and `serverEnv` say so, while
 * `databaseUrl` stays PostgreSQL itself, for the servers' LISTEN connections and migrations and for every test's own
 * clients (sessions, probes), which a transaction pooler would not keep.
 */
export interface TestDatabase {
  /** PostgreSQL itself. */
  databaseUrl?: string;
  /** The same database through the run's transaction pooler (TEST_DATABASE_POOLER_URL), for a server's pool. */
  poolerUrl?: string;
  dataDir: string;
  /** PGlite: the migrated template's data directory dump, for openDatabase's loadDataDir. */
  template?: Blob;
  drop(): Promise<void>;
}

let pgliteTemplate: Blob | undefined;

/**
 * The template dump as a Blob whose bytes are already in memory: PGlite reads a Blob whole with `arrayBuffer()`,
 * which Node assembles from chunks (about 0.5 s of CPU for a 42 MB dump, on every file's start).
 */
class InMemoryBlob extends Blob {
  constructor(private readonly content: Uint8Array) {
    super([]);
  }
  override get size(): number {
    return this.content.byteLength;
  }
  override async arrayBuffer(): Promise<ArrayBuffer> {
    return new Uint8Array(this.content).buffer; // a copy: PGlite may own what it is given
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = process.env.TEST_DATABASE_URL;
  const template = inject('databaseTemplate');
  if (!admin) {
    if (template?.kind === 'pglite') pgliteTemplate ??= new InMemoryBlob(readFileSync(template.dumpFile));
    return { dataDir: 'memory://', template: pgliteTemplate, drop: async () => {} };
  }
  const name = `t_${randomBytes(6).toString('hex')}`;
  await whileCheckpointsFail(admin, `CREATE DATABASE ${name}${template?.kind === 'postgres' ? ` TEMPLATE ${template.name}` : ''}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const pooler = process.env.TEST_DATABASE_POOLER_URL ? new URL(process.env.TEST_DATABASE_POOLER_URL) : undefined;
  if (pooler) pooler.pathname = `/${name}`;
  return {
    databaseUrl: url.toString(),
    poolerUrl: pooler?.toString(),
    dataDir: 'memory://',
    drop: () => whileCheckpointsFail(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/**
 * CREATE and DROP DATABASE force a checkpoint, which fails cluster-wide while test/hardening/storage-faults.test.ts
 * holds its tablespace's disk full ("checkpoint request failed"): another file creating or dropping its database at
 * that moment retries until the fault test frees the disk (seconds), instead of failing. Nothing signals that moment
 * to this process, hence the bounded retry.
 */
async function whileCheckpointsFail(admin: string, statement: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await adminQuery(admin, statement);
    } catch (e) {
      if (attempt >= 60 || !/checkpoint request failed/.test(String((e as Error).message))) throw e;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Writes the PGlite template into `dir`, for a server (or a second process) that opens a data directory. */
export async function seedDataDir(database: TestDatabase, dir: string): Promise<void> {
  if (!database.template) return;
  const pglite = new PGlite(dir, { loadDataDir: database.template });
  await pglite.waitReady;
  await pglite.close();
}

export const onPostgres = () => Boolean(process.env.TEST_DATABASE_URL);

/** A server's database settings (src/config.ts) on `database`: its pool through the run's pooler when there is one. */
export function databaseConfig(database: Pick<TestDatabase, 'databaseUrl' | 'poolerUrl'>): Partial<Config> {
  if (!database.poolerUrl) return { databaseUrl: database.databaseUrl };
  return { databaseUrl: database.poolerUrl, databaseDirectUrl: database.databaseUrl, databasePoolMode: 'transaction' };
}

/** The same as a server process's environment (DATABASE_URL, and behind a pooler DATABASE_DIRECT_URL and DATABASE_POOL_MODE). */
export function serverEnv(database: Pick<TestDatabase, 'databaseUrl' | 'poolerUrl'>): Record<string, string> {
  const c = databaseConfig(database);
  return {
    DATABASE_URL: c.databaseUrl ?? '',
    ...(c.databaseDirectUrl ? { DATABASE_DIRECT_URL: c.databaseDirectUrl, DATABASE_POOL_MODE: c.databasePoolMode! } : {}),
  };
}

/** Simple-protocol SQL on one session of the test database (PREPARE and SET must share it), and the generic plans it gives. */
export interface SqlSession {
  exec(sql: string): Promise<Record<string, unknown>[]>;
  /** The generic plan of `text` for `args` (SQL literals), as a prepared statement gets it after five runs; `noSeqScan` disables sequential scans. */
  plan(text: string, args: string[], opts?: { noSeqScan?: boolean }): Promise<string>;
  close(): Promise<void>;
}

/** A session on PostgreSQL (a client of its own), or on the database's PGlite instance embedded. */
export async function sqlSession(database: TestDatabase, pglite: PGlite | undefined): Promise<SqlSession> {
  let exec: SqlSession['exec'];
  let close = async () => {};
  if (database.databaseUrl) {
    const client = new pg.Client({ connectionString: database.databaseUrl });
    await client.connect();
    exec = async (sql) => {
      const r = (await client.query(sql)) as unknown as pg.QueryResult | pg.QueryResult[];
      return (Array.isArray(r) ? r.at(-1)! : r).rows;
    };
    close = () => client.end();
  } else {
    exec = async (sql) => (await pglite!.exec(sql)).at(-1)!.rows as Record<string, unknown>[];
  }
  return {
    exec,
    close,
    plan: async (text, args, opts = {}) => {
      const rows = await exec(`BEGIN;
        ${opts.noSeqScan ? 'SET LOCAL enable_seqscan = off;' : ''}
        SET LOCAL plan_cache_mode = force_generic_plan;
        PREPARE probe AS ${text};
        EXPLAIN EXECUTE probe${args.length ? `(${args.join(', ')})` : ''};`);
      await exec('DEALLOCATE probe; COMMIT');
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    },
  };
}
