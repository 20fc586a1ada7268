import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, Prisma, type Database } from '../../src/db/database.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../support/database.ts';

/**
 * Transactions queued at once leave the event loop its turns: on PGlite they
 * run one at a time on this thread and their queue moves on promises alone,
 * so without a turn between them, I/O that became ready meanwhile (a request
 * arriving, a response leaving) waited until the whole queue had run (the
 * PGlite p99 of bench scenario 7). On PostgreSQL each transaction waits on
 * the network anyway.
 */
let tdb: TestDatabase;
let db: Database;
beforeAll(async () => {
  tdb = await createTestDatabase();
  db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir, loadDataDir: tdb.template, poolSize: 1 });
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

describe(`transaction queue (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('lets I/O that became ready run before the next queued transactions, on both commit paths', async () => {
    const order: string[] = [];
    const queued = 6;
    const runs = Array.from({ length: queued }, (_, i) =>
      i % 2
        ? db.transaction(async (tx) => {
            if (i === 1) setImmediate(() => order.push('io'));
            await tx.$queryRaw`SELECT 1`;
            order.push(`tx${i}`);
          })
        : db.sql.transaction(async (send) => {
            await send([Prisma.sql`SELECT 1`], { commit: true });
            order.push(`tx${i}`);
          }),
    );
    await Promise.all(runs);
    expect(order).toHaveLength(queued + 1);
    // Ready after the second transaction's start: it runs before the queue has emptied.
    expect(order.indexOf('io')).toBeLessThan(order.length - 1);
  });
});
