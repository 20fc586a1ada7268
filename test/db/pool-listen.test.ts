import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { statement } from '../../src/db/sql-port.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../support/database.ts';

/**
 * The pool's connections listen (src/db/pool-listen.ts): a statement the pool completes outside a transaction
 * proves that every notification committed before it was sent has arrived, which the credential cache takes instead
 * of a round trip of its own. PostgreSQL only: embedded, there is one process and no notification.
 */
let tdb: TestDatabase;
let db: Database;
let other: pg.Client;
/** When each notification arrived, and the time each completed statement proved. */
const notified: number[] = [];
const delivered: number[] = [];
const CHANNEL = 'pool_listen_probe';
const probe = statement<[], { one: number }>('pool_listen_probe', 'SELECT 1 AS one');

beforeAll(async () => {
  if (!onPostgres()) return;
  tdb = await createTestDatabase();
  db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir, poolSize: 1 });
  db.listenOnPool!(CHANNEL, { notify: () => notified.push(performance.now()), delivered: (asOf) => delivered.push(asOf) });
  other = new pg.Client({ connectionString: tdb.databaseUrl });
  await other.connect();
});
afterAll(async () => {
  await other?.end();
  await db?.close();
  await tdb?.drop();
});

/** A NOTIFY committed by another session; resolves once committed, with the time it was. */
async function notifyCommitted(): Promise<number> {
  await other.query(`NOTIFY ${CHANNEL}`);
  return performance.now();
}

describe.skipIf(!onPostgres())("the pool's connections listen (PostgreSQL)", () => {
  it('a statement sent after a notification was committed comes back after it, and proves a time after the commit', async () => {
    await db.pool!.query('SELECT 1'); // the pool's one connection listens from its first checkout on
    for (let round = 0; round < 5; round++) {
      const before = notified.length;
      const committed = await notifyCommitted();
      await db.pool!.query('SELECT 1');
      const returned = performance.now();
      // It arrived before the statement came back (or earlier, on the idle connection).
      expect(notified.length).toBe(before + 1);
      expect(delivered.at(-1)).toBeGreaterThanOrEqual(committed);
      expect(delivered.at(-1)).toBeLessThan(returned);
    }
  });

  it('a statement inside a transaction proves nothing until the transaction ends', async () => {
    const client = await db.pool!.connect();
    try {
      await client.query('BEGIN');
      const proven = delivered.length;
      await client.query('SELECT 1');
      await client.query('SELECT 2');
      expect(delivered.length).toBe(proven);
      await client.query('COMMIT');
      expect(delivered.length).toBe(proven + 1);
    } finally {
      client.release();
    }
  });

  it("the SQL port's reads prove it too", async () => {
    const committed = await notifyCommitted();
    const proven = delivered.length;
    expect(await db.sql.rows(probe, [])).toEqual([{ one: 1 }]);
    expect(delivered.length).toBe(proven + 1);
    expect(delivered.at(-1)).toBeGreaterThanOrEqual(committed);
  });
});
