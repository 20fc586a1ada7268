import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { buildApp, type App } from '../../src/app.ts';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createTestDatabase, databaseConfig, seedDataDir, type TestDatabase } from './database.ts';
import { HttpClient } from './http.ts';

/** A real server on a loopback port-0 socket, with a manual clock. Tests talk to it over HTTP. */
export interface RunningApp {
  app: App;
  origin: string;
  clock: ManualClock;
  http: HttpClient;
  stop(): Promise<void>;
}

/** The file's server (appTest's `app`): a RunningApp over its own database, which `stop()` drops. */
export interface TestApp extends RunningApp {
  operatorToken: string;
  database: TestDatabase;
}

/** The encryption key of test servers (ENCRYPTION_KEYS): a fixed test value, so a database outlives its server. */
export const TEST_ENCRYPTION_KEYS = 'test1:dGVzdC1lbmNyeXB0aW9uLWtleS1vZi0zMi1ieXRlcyE=';

/** Test configuration on `database`: port 0, no bootstrap, silent logs unless TEST_LOG_LEVEL, a test encryption key. */
const testConfig = (database: TestDatabase, overrides: Partial<Config>) =>
  loadConfig(
    { LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ENCRYPTION_KEYS: TEST_ENCRYPTION_KEYS },
    { host: '127.0.0.1', port: 0, ...databaseConfig(database), dataDir: database.dataDir, bootstrap: false, ...overrides },
  );

async function start(config: Config, opts: { db?: Awaited<ReturnType<typeof openDatabase>>; log?: Logger } = {}): Promise<RunningApp> {
  const clock = new ManualClock();
  const app = await buildApp(config, { clock, db: opts.db, log: opts.log });
  await app.start();
  // Stopping twice is a no-op, so a test that stops the server itself (shutdown) leaves its cleanup nothing to do.
  const stopApp = app.stop;
  let stopped: Promise<void> | undefined;
  app.stop = () => (stopped ??= stopApp());
  const origin = app.urls.api_origin;
  return { app, origin, clock, http: new HttpClient(origin), stop: () => app.stop() };
}

/** Used by appTest (kit.ts); `log` replaces the silent logger. */
export async function startTestApp(overrides: Partial<Config> = {}, opts: { log?: Logger } = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
  const config = testConfig(database, { operatorToken, ...overrides });
  // PGlite starts from the migrated template's dump; the app leaves a database it was given open.
  const db = database.template ? await openDatabase({ dataDir: config.dataDir, loadDataDir: database.template }) : undefined;
  const running = await start(config, { db, log: opts.log });
  return {
    ...running,
    operatorToken,
    database,
    stop: async () => {
      await running.stop();
      await db?.close();
      await database.drop();
    },
  };
}

/**
 * A database that outlives one server, so a test can stop and start the app
 * on it again (crash, restart and bootstrap tests): a PGlite directory under a
 * temp dir, or (TEST_DATABASE_URL) a fresh PostgreSQL database. `dir` is a
 * scratch directory for files; `drop()` removes both.
 */
export interface PersistentDatabase extends TestDatabase {
  dir: string;
}

export async function createPersistentDatabase(): Promise<PersistentDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-test-'));
  const db = await createTestDatabase();
  const dataDir = db.databaseUrl ? 'memory://' : join(dir, 'data');
  if (!db.databaseUrl) await seedDataDir(db, dataDir);
  return {
    dir,
    databaseUrl: db.databaseUrl,
    poolerUrl: db.poolerUrl,
    dataDir,
    drop: async () => {
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The one way to run a server on a database it does not own: a persistent
 * database, or the file's PostgreSQL database for a second process beside
 * `app` (startSecondApp). The caller stops it; the database stays.
 */
export const startAppOn = (database: TestDatabase, overrides: Partial<Config> = {}): Promise<RunningApp> =>
  start(testConfig(database, overrides));

/** A second process on the file app's PostgreSQL database (its own pool, sequencer and LISTEN connection), same operator token. */
export const startSecondApp = (t: TestApp, overrides: Partial<Config> = {}): Promise<RunningApp> =>
  startAppOn(t.database, { operatorToken: t.operatorToken, ...overrides });
