import type { Logger } from 'pino';
import { afterAll, test as base } from 'vitest';
import type { Config } from '../../src/config.ts';
import { type RunningApp, startSecondApp, startTestApp, type TestApp } from './app.ts';
import { onPostgres } from './database.ts';

/**
 * The test kit: `test` gives each test the file's server (`app`, started on
 * first use over a fresh copy of the migrated database: PGlite, or
 * PostgreSQL when TEST_DATABASE_URL is set; stopped after the file).
 *
 *   const test = appTest();                       // or appTest({ config: { … }, log })
 *   test('rule it proves', async ({ app }) => {
 *     const { token } = await buildTenant(app, ['events:read']);
 *     const res = await app.http.get('/v1/platform/events?starting_after=evt_00000000000000000000000000000000', { token });
 *     expectPlatformError(res, 404, 'resource_missing', 'starting_after');
 *   });
 *
 * Suite hooks receive it too: `test.beforeAll(async ({ app }) => …)`. One
 * appTest per file (file-scoped fixtures are keyed by name): a test that needs
 * a differently configured server goes in its own file.
 */
export interface AppOptions {
  config?: Partial<Config>;
  /** Replaces the silent logger, e.g. to assert what a request logs. */
  log?: Logger;
}

const WIDE = 1_000_000;
/** Request buckets wide open, for suites that probe what handlers answer (fuzz, contract), not 429s. */
export const WIDE_OPEN_LIMITS: Partial<Config> = {
  rateLimitBurst: WIDE,
  rateLimitPerSecond: WIDE,
  surfaceARateLimitBurst: WIDE,
  surfaceARateLimitPerSecond: WIDE,
  createRateLimit: WIDE,
  organizationRateLimit: { perSecond: WIDE, burst: WIDE },
};

export function appTest(options: AppOptions = {}) {
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its first parameter's pattern
  return base.extend('app', { scope: 'file' }, async ({}, { onCleanup }): Promise<TestApp> => {
    const app = await startTestApp(options.config, { log: options.log });
    onCleanup(() => app.stop());
    return app;
  });
}

/**
 * On PostgreSQL, a second server process on the file's database (scale-out), started before the file's tests and
 * stopped after them; the getter answers `undefined` on PGlite, whose database one process holds.
 */
export function secondAppOnPostgres(test: ReturnType<typeof appTest>): () => RunningApp | undefined {
  let second: RunningApp | undefined;
  test.beforeAll(async ({ app }) => {
    if (onPostgres()) second = await startSecondApp(app);
  });
  afterAll(async () => {
    await second?.stop();
  });
  return () => second;
}

export {
  createPersistentDatabase,
  startAppOn,
  startSecondApp,
  type PersistentDatabase,
  type RunningApp,
  type TestApp,
} from './app.ts';
export { onPostgres } from './database.ts';
export { expectErrorResponse, expectGraphQLError, expectPlatformError } from './errors.ts';
export { emitEvent, feedEvents } from './events.ts';
export { rawRequest, type HttpResponse, type RawResponse } from './http.ts';
export { buildOrg, buildTenant, buildToken, type Server, TEST_MODE_KEYS, type Tenant, type TestOrg } from './tenant.ts';
