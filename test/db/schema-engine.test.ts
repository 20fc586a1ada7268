import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { applyMigrations, engineTimerCounts, migrationList } from '../../src/db/schema-engine.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

/**
 * Prisma's schema engine arms a 10 s timer around its migration lock and never clears it: `platform migrate` stayed
 * alive 10 s after its last migration. Once the engine is done, none of its timers is left pending.
 */
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

test('applying migrations (none pending here) leaves none of the engine timers pending', async () => {
  let pglite: PGlite | undefined;
  if (!database.databaseUrl) pglite = await PGlite.create({ loadDataDir: database.template });
  const factory = pglite ? new PrismaPGlite(pglite) : new PrismaPg({ connectionString: database.databaseUrl!, max: 1 });
  try {
    const armed = engineTimerCounts().armed;
    expect(await applyMigrations(factory)).toEqual([]);
    expect(migrationList().migrationDirectories.length).toBeGreaterThan(10);
    // The engine armed its timer (so this test measures something), and it is no longer pending.
    expect(engineTimerCounts().armed).toBeGreaterThan(armed);
    expect(engineTimerCounts().pending).toBe(0);
  } finally {
    await pglite?.close();
  }
});
