import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * The database a test file runs on: in-memory PGlite by default, or (when
 * TEST_DATABASE_URL names a PostgreSQL cluster, as `.ci/run` does) a fresh
 * database created for this file and dropped afterwards.
 */
export interface TestDatabase {
  databaseUrl?: string;
  dataDir: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) return { dataDir: 'memory://', drop: async () => {} };
  const name = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    databaseUrl: url.toString(),
    dataDir: 'memory://',
    drop: async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export const onPostgres = () => Boolean(process.env.TEST_DATABASE_URL);
