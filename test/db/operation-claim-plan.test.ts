import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { claimStatement } from '../../src/domain/operation/store.ts';
import { createTestDatabase, onPostgres, sqlSession, type SqlSession, type TestDatabase } from '../support/database.ts';

/**
 * The operations claim walks two partial indexes in claim order (migration
 * 20261126020000): plain index scans, which read only live operations, stop at
 * the claim's limit and mark the dead entries they meet, where a bitmap scan of
 * (status, run_after) visited every dead entry that status changes leave until
 * a vacuum. The claim is planned generically (as its prepared statement is)
 * with sequential and bitmap scans allowed: the planner must still choose the
 * ordered index scans on a table whose settled operations outnumber the live.
 */
let tdb: TestDatabase;
let db: Database;
let session: SqlSession;
const exec = (sql: string) => session.exec(sql);

beforeAll(async () => {
  tdb = await createTestDatabase();
  db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir, loadDataDir: tdb.template, poolSize: 1 });
  session = await sqlSession(tdb, db.pglite);
  await exec(`INSERT INTO "operation" (id, organization_id, subject_type, subject_id, kind, status, run_after, lease_expires_at, created_at, updated_at)
    SELECT 'op_c' || g, 'org_c', 'distribution', 'dist_c' || g, 'distribution.launch',
      CASE WHEN g <= 2000 THEN 'succeeded' WHEN g % 3 = 0 THEN 'running' WHEN g % 3 = 1 THEN 'waiting' ELSE 'pending' END,
      now() - (g || ' seconds')::interval, CASE WHEN g % 3 = 0 THEN now() + interval '1 minute' END, now(), now()
    FROM generate_series(1, 2030) g`);
  await exec('ANALYZE "operation"');
});
afterAll(async () => {
  await session?.close();
  await db?.close();
  await tdb?.drop();
});

describe(`operations claim plan (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('walks the due and the expired-lease partial indexes in order, with no bitmap and no sequential scan', async () => {
    const p = await session.plan(claimStatement.text, [`'owner'`, 'now()', `now() + interval '30 seconds'`, '4']);
    expect(p).toMatch(/Index Scan using operation_due_idx/);
    expect(p).toMatch(/Index Scan using operation_running_idx/);
    expect(p).not.toMatch(/Bitmap|Seq Scan on operation/);
  });

  it('claims the most overdue due operations, pending and waiting and expired leases alike, and never a live lease', async () => {
    const [{ n: before }] = (await exec(`SELECT count(*)::int AS n FROM "operation" WHERE lease_owner IS NOT NULL`)) as [{ n: number }];
    // Expire one running lease: it is the oldest of its branch, but not older than every due one.
    await exec(`UPDATE "operation" SET lease_expires_at = now() - interval '1 second' WHERE id = 'op_c2001'`);
    const claimed = (await db.sql.rows(claimStatement, ['owner', new Date(), new Date(Date.now() + 30_000), 3])).map((o) => o.id).sort();
    // Oldest first: run_after = now() - g seconds, so the highest g among the due is the most overdue (a g divisible
    // by 3 is running on a live lease: 2028 is passed over).
    expect(claimed).toEqual(['op_c2027', 'op_c2029', 'op_c2030']);
    const expired = (await db.sql.rows(claimStatement, ['owner2', new Date(), new Date(Date.now() + 30_000), 100])).map((o) => o.id);
    expect(expired).toContain('op_c2001');
    expect(expired).not.toContain('op_c2004');
    expect(expired.filter((id) => Number(id.slice(4)) % 3 === 0)).toEqual(['op_c2001']);
    const [{ n: after }] = (await exec(`SELECT count(*)::int AS n FROM "operation" WHERE lease_owner IS NOT NULL`)) as [{ n: number }];
    expect(after - before).toBe(3 + expired.length);
  });
});
