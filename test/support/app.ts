import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { buildApp, type App } from '../../src/app.ts';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { HttpClient } from './http.ts';

/**
 * A real server on a loopback port-0 socket over a real database, with a
 * manual clock. Tests talk to it over HTTP only.
 */
export interface TestApp {
  app: App;
  origin: string;
  clock: ManualClock;
  operatorToken: string;
  http: HttpClient;
  database: TestDatabase;
  stop(): Promise<void>;
}

/** `log` replaces the silent logger, e.g. to assert what a request logs. */
export async function startTestApp(overrides: Partial<Config> = {}, opts: { log?: Logger } = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
  const config = loadConfig(
    { LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent' },
    {
      host: '127.0.0.1',
      port: 0,
      databaseUrl: database.databaseUrl,
      dataDir: database.dataDir,
      bootstrap: false,
      operatorToken,
      ...overrides,
    },
  );
  const clock = new ManualClock();
  // PGlite starts from the migrated template's dump; the app leaves a database it was given open.
  const db = database.template ? await openDatabase({ dataDir: config.dataDir, loadDataDir: database.template }) : undefined;
  const app = await buildApp(config, { clock, db, log: opts.log });
  await app.start();
  const origin = app.urls.api_origin;
  return {
    app,
    origin,
    clock,
    operatorToken,
    http: new HttpClient(origin),
    database,
    stop: async () => {
      await app.stop();
      await db?.close();
      await database.drop();
    },
  };
}
