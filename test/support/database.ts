import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { inject } from 'vitest';
import { adminQuery } from './global-setup.ts';

/**
 * The database a test file runs on: in-memory PGlite by default, or (when
 * TEST_DATABASE_URL names a PostgreSQL cluster, as `.ci/run` does) a fresh
 * database created for this file and dropped afterwards. Both start as a copy
 * of the run's migrated template (test/support/global-setup.ts).
 */
export interface TestDatabase {
  databaseUrl?: string;
  dataDir: string;
  /** PGlite: the migrated template's data directory dump, for openDatabase's loadDataDir. */
  template?: Blob;
  drop(): Promise<void>;
}

let pgliteTemplate: Blob | undefined;

export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = process.env.TEST_DATABASE_URL;
  const template = inject('databaseTemplate');
  if (!admin) {
    if (template?.kind === 'pglite') pgliteTemplate ??= new Blob([readFileSync(template.dumpFile)]);
    return { dataDir: 'memory://', template: pgliteTemplate, drop: async () => {} };
  }
  const name = `t_${randomBytes(6).toString('hex')}`;
  await adminQuery(admin, `CREATE DATABASE ${name}${template?.kind === 'postgres' ? ` TEMPLATE ${template.name}` : ''}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    databaseUrl: url.toString(),
    dataDir: 'memory://',
    drop: () => adminQuery(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** Writes the PGlite template into `dir`, for a server (or a second process) that opens a data directory. */
export async function seedDataDir(database: TestDatabase, dir: string): Promise<void> {
  if (!database.template) return;
  const pglite = new PGlite(dir, { loadDataDir: database.template });
  await pglite.waitReady;
  await pglite.close();
}

export const onPostgres = () => Boolean(process.env.TEST_DATABASE_URL);
