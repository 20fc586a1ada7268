import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, Prisma, type Database } from '../../src/db/database.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../support/database.ts';

/**
 * The SQL port's batched transactions (src/db/sql-port.ts), on whichever
 * database the run uses: pipelined named prepared statements on PostgreSQL,
 * a multi-statement simple query embedded. Both must give the same rows for
 * the same templates, fail a batch without losing the connection, and keep
 * working after a failure (on PostgreSQL: the statements it prepared before
 * the failure are known, the one that failed is parsed again).
 */
let tdb: TestDatabase;
let db: Database;
beforeAll(async () => {
  tdb = await createTestDatabase();
  db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir, loadDataDir: tdb.template, poolSize: 1 });
  await db.sql.transaction((send) =>
    send([Prisma.sql`CREATE TABLE port_probe (k text PRIMARY KEY, n float8, at timestamptz, flag boolean, doc jsonb)`], { commit: true }),
  );
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

const insert = (k: string, n: number | null) => Prisma.sql`INSERT INTO port_probe (k, n) VALUES (${k}, ${n}::float8)`;
const count = Prisma.sql`SELECT count(*)::int AS n FROM port_probe`;

describe(`SQL port batches (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('sends values as the database reads them: text with quotes and backslashes, numbers, NULL, instants, booleans, JSON', async () => {
    const at = new Date('2026-11-23T08:00:00.123Z');
    const doc = { a: 'it\'s \\ "quoted"', n: [1, 2] };
    const [, [row]] = (await db.sql.transaction((send) =>
      send(
        [
          Prisma.sql`INSERT INTO port_probe (k, n, at, flag, doc) VALUES (${"o'brien \\ x"}, ${2.5}::float8, ${at}::timestamptz, ${true}, ${doc}::jsonb)`,
          Prisma.sql`SELECT k, n, at, flag, doc, ${null}::text AS nothing FROM port_probe WHERE k = ${"o'brien \\ x"}`,
        ],
        { commit: true },
      ),
    )) as [unknown, [Record<string, unknown>]];
    expect(row).toEqual({ k: "o'brien \\ x", n: 2.5, at, flag: true, doc, nothing: null });
  });

  it('runs the same statement twice in one batch, and again in later transactions', async () => {
    for (const round of [1, 2, 3]) {
      const results = await db.sql.transaction((send) =>
        send([insert(`twice-${round}-a`, 1), insert(`twice-${round}-b`, 2), count], { commit: true }),
      );
      expect(results).toHaveLength(3);
    }
    const [[{ n }]] = (await db.sql.transaction((send) =>
      send([Prisma.sql`SELECT count(*)::int AS n FROM port_probe WHERE k LIKE 'twice-%'`]),
    )) as [[{ n: number }]];
    expect(n).toBe(6);
  });

  it('a failing statement rolls the whole transaction back, skips the rest of its batch, and leaves the connection usable', async () => {
    const before = await db.sql.transaction((send) => send([count]));
    const ran: string[] = [];
    await expect(
      db.sql.transaction(async (send) => {
        await send([insert('kept-until-rollback', 1)]);
        ran.push('first');
        // A new statement (parsed here), then a duplicate key, then a statement that must not run.
        await send(
          [
            Prisma.sql`SELECT k FROM port_probe WHERE k = ${'kept-until-rollback'} AND n > ${0}::float8`,
            insert('kept-until-rollback', 2),
            insert('never', 3),
          ],
          { commit: true },
        );
        ran.push('second');
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(ran).toEqual(['first']);
    // The same statements work on the same (only) connection: the ones prepared before the failure are not prepared twice.
    const after = await db.sql.transaction((send) =>
      send([Prisma.sql`SELECT k FROM port_probe WHERE k = ${'kept-until-rollback'} AND n > ${0}::float8`, insert('never', 3), count], {
        commit: true,
      }),
    );
    expect(after[0]).toEqual([]);
    expect(after[2]![0]!.n).toBe((before[0]![0]!.n as number) + 1);
  });

  it('a statement that does not parse fails its batch; the next batch parses what it needs', async () => {
    const skipped = Prisma.sql`SELECT ${'after the failure'}::text AS said`;
    await expect(db.sql.transaction((send) => send([count, Prisma.sql`SELEC ${1}`, skipped], { commit: true }))).rejects.toMatchObject({
      code: '42601',
    });
    const [[row], [said]] = (await db.sql.transaction((send) => send([count, skipped], { commit: true }))) as [[{ n: number }], [unknown]];
    expect(typeof row!.n).toBe('number');
    expect(said).toEqual({ said: 'after the failure' });
  });

  it('a value that cannot be sent fails the batch before anything is written, not the connection', async () => {
    await expect(db.sql.transaction((send) => send([insert('nan', Number.NaN)], { commit: true }))).rejects.toThrow(/not a finite number/);
    await expect(db.sql.transaction((send) => send([insert('nul\u0000', 1)], { commit: true }))).rejects.toThrow(/NUL/);
    const [[row]] = (await db.sql.transaction((send) => send([count], { commit: true }))) as [[{ n: number }]];
    expect(typeof row!.n).toBe('number');
  });
});
