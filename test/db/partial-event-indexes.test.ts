import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import {
  FEED_STATEMENTS,
  feedPageOfBrandsStatement,
  feedPageOfSubjectStatement,
  feedPageOfSubjectTypesStatement,
  feedPageOfTypesStatement,
  feedPageStatement,
  maxPositionStatement,
  streamPullStatement,
} from '../../src/domain/event/store.ts';
import { createTestDatabase, onPostgres, sqlSession, type SqlSession, type TestDatabase } from '../support/database.ts';

/**
 * The event indexes that hold `seq` or `position` are partial on the number
 * being set (migration 20261123120000): an unsequenced row is in none of
 * them, so the writer's INSERT maintains only the primary key and the
 * sequencer's queue. Every hot read must still be able to use its index:
 * each statement is planned generically (as a prepared statement is after
 * five runs) with sequential scans disabled, so a plan that cannot prove
 * the index's predicate falls back to a `Seq Scan on event` and fails here.
 */
let tdb: TestDatabase;
let db: Database;
let session: SqlSession;
const exec = (sql: string) => session.exec(sql);
/** The generic plan of `text` for `args` (literals), with sequential scans off. */
const plan = (text: string, args: string[]) => session.plan(text, args, { noSeqScan: true });

beforeAll(async () => {
  tdb = await createTestDatabase();
  db = await openDatabase({ databaseUrl: tdb.databaseUrl, dataDir: tdb.dataDir, loadDataDir: tdb.template, poolSize: 1 });
  session = await sqlSession(tdb, db.pglite);
  await exec(`INSERT INTO event (id, organization_id, seq, position, type, subject_type, subject_id, data, brand_id, created_at)
    SELECT 'evt_p' || g, 'org_p' || (g % 3), CASE WHEN g <= 300 THEN g END, CASE WHEN g <= 300 THEN 1000 + g END,
      CASE WHEN g % 50 = 0 THEN 'deployment.failed' ELSE 'assertion.created' END, 'entity', 'ent_p' || (g % 7), '{}'::jsonb,
      CASE WHEN g % 2 = 0 THEN 'brand_p' END, now()
    FROM generate_series(1, 320) g`);
  await exec('ANALYZE event');
});
afterAll(async () => {
  await session?.close();
  await db?.close();
  await tdb?.drop();
});

const types = `ARRAY['assertion.created', 'deployment.failed']`;
const filtered = (brands: string, subjectTypes: string, subjectId: string) => [
  `'org_p1'`,
  `'0'`,
  types,
  brands,
  subjectTypes,
  subjectId,
  '101',
];

describe(`event indexes partial on seq and position (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  it('every index holding seq or position leaves unsequenced rows out', async () => {
    const rows = await exec(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'event' AND (indexdef LIKE '%seq%' OR indexdef LIKE '%position%') ORDER BY indexname`,
    );
    const defs = Object.fromEntries(rows.map((r) => [r.indexname as string, r.indexdef as string]));
    expect(Object.keys(defs).sort()).toEqual([
      'event_organization_id_brand_id_seq_idx',
      // A replay's \`since\`: the first sequenced event at or after a time (only sequenced rows, like the others).
      'event_organization_id_created_at_idx',
      'event_organization_id_seq_key',
      'event_organization_id_subject_id_seq_idx',
      'event_organization_id_subject_type_seq_idx',
      'event_organization_id_type_seq_idx',
      'event_position_key',
      'event_unsequenced_idx',
    ]);
    for (const [name, def] of Object.entries(defs)) {
      if (name === 'event_unsequenced_idx') expect(def).toMatch(/WHERE \(?seq IS NULL\)?/);
      else if (name === 'event_position_key') expect(def).toMatch(/WHERE \(?"?position"? IS NOT NULL\)?/);
      else expect(def).toMatch(/seq IS NOT NULL/);
    }
  });

  it.each([
    ['feed, first page', feedPageStatement.text, [`'org_p1'`, `'0'`, '101'], 'event_organization_id_seq_key'],
    ['feed, after a cursor', feedPageStatement.text, [`'org_p1'`, `'150'`, '101'], 'event_organization_id_seq_key'],
    [
      'type filter (the rare-type page)',
      feedPageOfTypesStatement.text,
      [`'org_p1'`, `'0'`, `ARRAY['deployment.failed']`, '101'],
      'event_organization_id_type_seq_idx',
    ],
    [
      'brand filter',
      feedPageOfBrandsStatement.text,
      filtered(`ARRAY['brand_p']`, 'NULL', 'NULL'),
      'event_organization_id_brand_id_seq_idx',
    ],
    [
      'subject type filter',
      feedPageOfSubjectTypesStatement.text,
      filtered('NULL', `ARRAY['entity']`, 'NULL'),
      'event_organization_id_subject_type_seq_idx',
    ],
    ['subject filter', feedPageOfSubjectStatement.text, filtered('NULL', 'NULL', `'ent_p3'`), 'event_organization_id_subject_id_seq_idx'],
    // Newest first (order=desc, GraphQL last): the same indexes walked backward; without a cursor, past the last seq.
    ['newest first: the head', FEED_STATEMENTS.desc.all.text, [`'org_p1'`, `'9223372036854775807'`, '2'], 'event_organization_id_seq_key'],
    ['newest first, below a cursor', FEED_STATEMENTS.desc.all.text, [`'org_p1'`, `'150'`, '101'], 'event_organization_id_seq_key'],
    [
      'newest first, type filter',
      FEED_STATEMENTS.desc.ofTypes.text,
      [`'org_p1'`, `'150'`, `ARRAY['deployment.failed']`, '101'],
      'event_organization_id_type_seq_idx',
    ],
    [
      'newest first, brand filter',
      FEED_STATEMENTS.desc.ofBrands.text,
      filtered(`ARRAY['brand_p']`, 'NULL', 'NULL'),
      'event_organization_id_brand_id_seq_idx',
    ],
    [
      'newest first, subject type filter',
      FEED_STATEMENTS.desc.ofSubjectTypes.text,
      filtered('NULL', `ARRAY['entity']`, 'NULL'),
      'event_organization_id_subject_type_seq_idx',
    ],
    [
      'newest first, subject filter',
      FEED_STATEMENTS.desc.ofSubject.text,
      filtered('NULL', 'NULL', `'ent_p3'`),
      'event_organization_id_subject_id_seq_idx',
    ],
    ['stream pull and fan-out read (position order)', streamPullStatement.text, [`'1100'`, '1000'], 'event_position_key'],
    ['stream start (max position)', maxPositionStatement.text, [], 'event_position_key'],
    [
      "sequencer: an organization's max(seq)",
      `SELECT max(seq) FROM event WHERE organization_id = $1`,
      [`'org_p1'`],
      'event_organization_id_seq_key',
    ],
    ['sequencer: its queue', `SELECT id FROM event WHERE seq IS NULL ORDER BY id LIMIT 1000`, [], 'event_unsequenced_idx'],
  ])('%s uses its index', async (_name, text, args, index) => {
    const p = await plan(text, args);
    expect(p).toContain(index);
    expect(p).not.toMatch(/Seq Scan on event/);
  });

  it('the head (order=desc&limit=1) reads the last entries of the seq index, with no sort', async () => {
    const p = await plan(FEED_STATEMENTS.desc.all.text, [`'org_p1'`, `'9223372036854775807'`, '2']);
    expect(p).toMatch(/Index Scan Backward using event_organization_id_seq_key/);
    expect(p).not.toMatch(/Sort/);
  });
});
