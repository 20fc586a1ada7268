import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type App } from '../../src/app.ts';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createTestDatabase, seedDataDir, type TestDatabase } from './database.ts';
import { HttpClient } from './http.ts';

/**
 * A database that outlives one server, so a test can stop and start the app
 * on it again: a PGlite directory under a temp dir, or (TEST_DATABASE_URL) a
 * fresh PostgreSQL database. `dir` is a scratch directory for files.
 */
export interface PersistentDatabase extends TestDatabase {
  dir: string;
}

export async function createPersistentDatabase(): Promise<PersistentDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-ops-'));
  const db = await createTestDatabase();
  const dataDir = db.databaseUrl ? 'memory://' : join(dir, 'data');
  if (!db.databaseUrl) await seedDataDir(db, dataDir);
  return {
    dir,
    databaseUrl: db.databaseUrl,
    dataDir,
    drop: async () => {
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RunningApp {
  app: App;
  http: HttpClient;
  clock: ManualClock;
  stop(): Promise<void>;
}

/** Starts a real server on `database` (port 0, silent logs unless TEST_LOG_LEVEL). */
export async function startAppOn(database: PersistentDatabase, overrides: Partial<Config> = {}): Promise<RunningApp> {
  const config = loadConfig(
    { LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent' },
    { host: '127.0.0.1', port: 0, databaseUrl: database.databaseUrl, dataDir: database.dataDir, bootstrap: false, ...overrides },
  );
  const clock = new ManualClock();
  const app = await buildApp(config, { clock });
  await app.start();
  return { app, http: new HttpClient(app.urls.api_origin), clock, stop: () => app.stop() };
}
