import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, Prisma, type Database } from '../../src/db/database.ts';
import { GroupContractError, groupCommitPort, type GroupCommitOptions } from '../../src/db/group-commit.ts';
import type { BatchSend, SqlPort } from '../../src/db/sql-port.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../support/database.ts';

/**
 * Group commit (src/db/group-commit.ts) on whichever database the run uses:
 * concurrent grouped transactions share one database transaction, and what
 * each may rely on is what a transaction of its own gives it. The port under
 * test groups over the database's own port, whose transactions it counts.
 */
let tdb: TestDatabase;
let db: Database;
let transactions = 0;
beforeAll(async () => {
  tdb = await createTestDatabase();
  db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir, loadDataDir: tdb.template, poolSize: 6 });
  await db.sql.transaction((send) =>
    send([Prisma.sql`CREATE TABLE group_probe (k text PRIMARY KEY, n int NOT NULL DEFAULT 0)`], { commit: true }),
  );
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});
beforeEach(async () => {
  transactions = 0;
  await db.sql.transaction((send) => send([Prisma.sql`DELETE FROM group_probe`], { commit: true }));
});

const counted = (): SqlPort => ({
  rows: db.sql.rows,
  transaction: (fn) => {
    transactions++;
    return db.sql.transaction(fn);
  },
});
const port = (o: Partial<GroupCommitOptions> = {}) => groupCommitPort(counted(), { groups: 1, members: 32, ...o });

const insert = (k: string) => Prisma.sql`INSERT INTO group_probe (k) VALUES (${k})`;
const select = (k: string) => Prisma.sql`SELECT k, n FROM group_probe WHERE k = ${k}`;
const keys = async () =>
  (await db.sql.transaction((send) => send([Prisma.sql`SELECT k FROM group_probe ORDER BY k`])))[0]!.map((r) => r.k as string);
const counter = async (k: string) => (await db.sql.transaction((send) => send([select(k)])))[0]![0]?.n as number | undefined;

/** A promise and its resolver. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Reads the counter under its lock, then writes it plus one: a lost update shows as a lower total. */
const increment =
  (k: string, key: (i: number) => readonly string[], late: readonly string[] = []) =>
  async (send: BatchSend) => {
    const [rows] = await send([Prisma.sql`SELECT n FROM group_probe WHERE k = ${k} FOR UPDATE`], { keys: key(0) });
    const n = rows![0]!.n as number;
    await send([Prisma.sql`UPDATE group_probe SET n = ${n + 1}::int WHERE k = ${k}`], { commit: true, keys: late });
  };

describe(`Group commit (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('concurrent members share one transaction; each gets its own rows, and all of them are committed', async () => {
    const p = port();
    const names = Array.from({ length: 8 }, (_, i) => `m${i}`);
    const results = await Promise.all(
      names.map((k) =>
        p.transaction(
          async (send) => {
            const [, rows] = await send([insert(k), select(k)], { keys: [k] });
            await send([Prisma.sql`UPDATE group_probe SET n = 7 WHERE k = ${k}`], { commit: true });
            return rows![0]!.k;
          },
          { group: true },
        ),
      ),
    );
    expect(results).toEqual(names);
    expect(transactions).toBe(1);
    expect(await keys()).toEqual(names);
  });

  it("a member's rows stay invisible, and a neighbour's commit unanswered, until every member has sent its last batch", async () => {
    const p = port();
    const firstSent = gate();
    const hold = gate();
    let bAnswered = false;
    const a = p.transaction(
      async (send) => {
        await send([insert('a')], { keys: ['a'] });
        firstSent.open();
        await hold.opened;
        await send([], { commit: true });
      },
      { group: true },
    );
    const b = p.transaction((send) => send([insert('b')], { commit: true, keys: ['b'] }), { group: true }).then(() => (bAnswered = true));
    await firstSent.opened;
    await new Promise((resolve) => setImmediate(resolve));
    // b's last batch has run with a's first, and b waits for the commit; outside the group (PostgreSQL: another
    // connection; PGlite has one, which the group holds) nothing is there yet.
    expect(bAnswered).toBe(false);
    if (onPostgres()) expect(await keys()).toEqual([]);
    hold.open();
    await Promise.all([a, b]);
    expect(bAnswered).toBe(true);
    expect(await keys()).toEqual(['a', 'b']);
    expect(transactions).toBe(1);
  });

  it('a failing statement rolls the group back; the others rerun alone and commit, the failing one gets its own error', async () => {
    await db.sql.transaction((send) => send([insert('taken')], { commit: true }));
    const p = port();
    const names = ['f1', 'f2', 'taken', 'f4', 'f5'];
    const outcomes = await Promise.allSettled(
      names.map((k) => p.transaction((send) => send([insert(k)], { commit: true, keys: [k] }), { group: true })),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' });
    expect(await keys()).toEqual(['f1', 'f2', 'f4', 'f5', 'taken']);
    expect(transactions).toBe(1 + names.length);
  });

  it("a member that throws between batches: its rows are not committed, its neighbours' are, and it gets its own error", async () => {
    const p = port();
    const outcomes = await Promise.allSettled(
      ['t1', 't2', 't3'].map((k) =>
        p.transaction(
          async (send) => {
            await send([insert(k)], { keys: [k] });
            if (k === 't2') throw new Error('boom');
            await send([], { commit: true });
          },
          { group: true },
        ),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('boom');
    expect(await keys()).toEqual(['t1', 't3']);
  });

  it('alone, a member is a transaction of its own: its failure is answered without a rerun', async () => {
    await db.sql.transaction((send) => send([insert('solo')], { commit: true }));
    const p = port();
    await expect(p.transaction((send) => send([insert('solo')], { commit: true, keys: ['solo'] }), { group: true })).rejects.toMatchObject({
      code: '23505',
    });
    expect(transactions).toBe(1);
  });

  it('members naming the same key with their first batch never share a group: no lost update', async () => {
    await db.sql.transaction((send) => send([insert('c')], { commit: true }));
    const p = port({ groups: 2 });
    await Promise.all(
      Array.from({ length: 10 }, () =>
        p.transaction(
          increment('c', () => ['c']),
          { group: true },
        ),
      ),
    );
    expect(await counter('c')).toBe(10);
  });

  it('a key named later that another member of the group holds rolls the group back; both rerun alone: no lost update', async () => {
    await db.sql.transaction((send) => send([insert('shared')], { commit: true }));
    const p = port();
    await Promise.all(
      ['x', 'y'].map((first) =>
        p.transaction(
          increment('shared', () => [first], ['shared']),
          { group: true },
        ),
      ),
    );
    expect(await counter('shared')).toBe(2);
    expect(transactions).toBe(3);
  });

  it('a member that waits on something outside for longer than the stall limit does not hold its neighbours', async () => {
    const p = port({ stallMs: 100 });
    const bDone = gate();
    const a = p.transaction(
      async (send) => {
        await send([insert('slow')], { keys: ['slow'] });
        // Waits for b, which can only finish if the group gives up on this member.
        await bDone.opened;
        await send([], { commit: true });
      },
      { group: true },
    );
    const b = p.transaction((send) => send([insert('quick')], { commit: true, keys: ['quick'] }), { group: true });
    await b;
    bDone.open();
    await a;
    expect(await keys()).toEqual(['quick', 'slow']);
  });

  it('a member that fails after the group committed is not run again', async () => {
    const p = port();
    let runs = 0;
    const outcomes = await Promise.allSettled(
      ['p1', 'p2'].map((k) =>
        p.transaction(
          async (send) => {
            runs++;
            await send([insert(k)], { commit: true, keys: [k] });
            if (k === 'p1') throw new Error('after commit');
          },
          { group: true },
        ),
      ),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    expect(runs).toBe(2);
    expect(await keys()).toEqual(['p1', 'p2']);
  });

  it('a grouped body that names no key with its first batch fails before anything is sent, grouped or not, and is not rerun', async () => {
    for (const groups of [1, 0]) {
      const p = port({ groups });
      let runs = 0;
      const outcomes = await Promise.allSettled([
        p.transaction(
          async (send) => {
            runs++;
            await send([insert(`nameless${groups}`)], { commit: true });
          },
          { group: true },
        ),
        p.transaction((send) => send([insert(`named${groups}`)], { commit: true, keys: [`named${groups}`] }), { group: true }),
      ]);
      expect(outcomes[0]).toMatchObject({ status: 'rejected', reason: expect.any(GroupContractError) });
      expect(outcomes[1]!.status).toBe('fulfilled');
      expect(runs).toBe(1);
    }
    expect(await keys()).toEqual(['named0', 'named1']);
    // Outside a group nothing is asked of the body.
    await port().transaction((send) => send([insert('plain')], { commit: true }));
    expect(await keys()).toContain('plain');
  });

  it('groups: 0 runs every transaction alone', async () => {
    const p = port({ groups: 0 });
    await Promise.all(
      ['o1', 'o2', 'o3'].map((k) => p.transaction((send) => send([insert(k)], { commit: true, keys: [k] }), { group: true })),
    );
    expect(transactions).toBe(3);
    expect(await keys()).toEqual(['o1', 'o2', 'o3']);
  });
});
