import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { serverEntry } from '../../scripts/build-server.mjs';
import { openDatabase } from '../../src/db/database.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated database every test database starts from (see test/support/database.ts). */
    databaseTemplate: { kind: 'pglite'; dumpFile: string } | { kind: 'postgres'; name: string };
  }
}

/**
 * Migrates one database per run instead of one per test file: on PostgreSQL a
 * template database that each file clones with CREATE DATABASE ... TEMPLATE,
 * on PGlite a dump of a migrated data directory that each file loads. The
 * app's start() still migrates, and finds nothing pending. With TEST_DATABASE_POOLER_URL (a PgBouncer in front of
 * the cluster), the servers' pools reach each file's database through it (test/support/database.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The server processes tests start run the built server: built here once if a source changed, not by a dozen
  // processes starting at once (scripts/build-server.mjs).
  await serverEntry('main');
  const admin = process.env.TEST_DATABASE_URL;
  // A pooler that does not answer fails the run here, once, rather than every file's first request.
  if (admin && process.env.TEST_DATABASE_POOLER_URL) await adminQuery(process.env.TEST_DATABASE_POOLER_URL, 'SELECT 1');
  if (admin) {
    const name = `tpl_${randomBytes(6).toString('hex')}`;
    await adminQuery(admin, `CREATE DATABASE ${name}`);
    const url = new URL(admin);
    url.pathname = `/${name}`;
    const db = await openDatabase({ databaseUrl: url.toString(), dataDir: 'memory://', poolSize: 1 });
    await db.migrate();
    await db.close();
    // CREATE DATABASE ... TEMPLATE refuses a template with open sessions (the schema engine's may linger).
    await adminQuery(admin, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
    await adminQuery(admin, `ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
    project.provide('databaseTemplate', { kind: 'postgres', name });
    return () => adminQuery(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'platform-test-template-'));
  const dumpFile = join(dir, 'pgdata.tar');
  const db = await openDatabase({ dataDir: 'memory://' });
  await db.migrate();
  // Every file loads this dump and starts PostgreSQL on it (~200 files per run). 128 MB of shared buffers cost each
  // start about 0.7 s of CPU to set up in WebAssembly, and a test file's database never holds more than a few MB;
  // the checkpoint leaves the loading start nothing to redo.
  await db.pglite!.exec(`ALTER SYSTEM SET shared_buffers = '16MB'`);
  // Nothing a test runs creates a database on PGlite: without template0 and template1 the dump is 27 MB instead of
  // 42 MB, and a load costs 0.61 s of CPU instead of 0.71 s (median of seven interleaved).
  for (const statement of [
    'ALTER DATABASE template1 IS_TEMPLATE false',
    'DROP DATABASE template1',
    'ALTER DATABASE template0 IS_TEMPLATE false',
    'ALTER DATABASE template0 ALLOW_CONNECTIONS true',
    'DROP DATABASE template0',
  ])
    await db.pglite!.query(statement);
  await db.pglite!.exec('CHECKPOINT');
  const dump = await db.pglite!.dumpDataDir('none');
  writeFileSync(dumpFile, Buffer.from(await dump.arrayBuffer()));
  await db.close();
  project.provide('databaseTemplate', { kind: 'pglite', dumpFile });
  return async () => rmSync(dir, { recursive: true, force: true });
}

export async function adminQuery(admin: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
