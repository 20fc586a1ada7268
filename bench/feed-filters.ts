/**
 * The feed's brand and subject filters (src/domain/event/filter.ts) on
 * PostgreSQL, with the generic plans the SQL port's prepared statements get:
 *
 * 1. Plans: each filter statement's EXPLAIN (ANALYZE, BUFFERS) on a 200k-event
 *    organization, for a rare brand, a rare subject type and one subject id:
 *    an index scan on its own index, a few buffers; and the naive alternative
 *    (the brand as a filter on the seq walk) for contrast.
 * 2. Flatness: the same rare-brand / rare-subject-type / subject-id page on a
 *    200k and a 20k organization of the same table, interleaved (A,B,A,B
 *    slices): ratio of per-page time (1.0 = flat).
 * 3. Write cost of the three new indexes: batches of 2,000 rows into a table
 *    with the old event indexes and one with the new ones too, interleaved.
 *
 * Usage: DATABASE_URL=postgres://…/bench_x node --import tsx bench/feed-filters.ts
 * (a migrated, throwaway database: it inserts into `event` and deletes after).
 */
import pg from 'pg';
import {
  feedPageOfBrandsStatement,
  feedPageOfSubjectStatement,
  feedPageOfSubjectTypesStatement,
  feedPageStatement,
} from '../src/domain/event/store.ts';
import { PUBLIC_EVENT_TYPES } from '../src/domain/event/types.ts';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL: a migrated throwaway PostgreSQL database');
const c = new pg.Client({ connectionString: url });
await c.connect();
const T = [...PUBLIC_EVENT_TYPES];

async function seed(org: string, size: number, positionBase: number) {
  // 100 rare-brand, 100 rare-subject-type and 100 rare-subject-id events per organization, whatever its size; 5% organization-level.
  const every = size / 100;
  await c.query(
    `INSERT INTO event (id, organization_id, seq, position, type, subject_type, subject_id, data, brand_id, created_at)
     SELECT 'evt_' || $1 || '_' || g, $1, g, $3::bigint + g,
       (ARRAY['payout.created','distribution.live','enrollment.created','operation.succeeded'])[1 + g % 4],
       CASE WHEN g % $4 = 7 THEN 'rare_thing' ELSE (ARRAY['payout','distribution','enrollment'])[1 + g % 3] END,
       CASE WHEN g % $4 = 5 THEN 'sub_rare' ELSE 'sub_' || (g % 20000) END, '{}'::jsonb,
       CASE WHEN g % $4 = 3 THEN 'brand_rare' WHEN g % 20 = 0 THEN NULL WHEN g % 10 = 1 THEN 'brand_b' ELSE 'brand_a' END, now()
     FROM generate_series(1, $2::int) g`,
    [org, size, positionBase, every],
  );
}

await c.query("DELETE FROM event WHERE organization_id IN ('org_bench_big', 'org_bench_small')");
await seed('org_bench_big', 200_000, 10_000_000);
await seed('org_bench_small', 20_000, 20_000_000);
await c.query('ANALYZE event');
await c.query('SET plan_cache_mode = force_generic_plan');

type Case = { label: string; text: string; params: (org: string) => unknown[] };
const naive = feedPageStatement.text.replace(' ORDER BY', ' AND brand_id = ANY($4::text[]) ORDER BY');
const cases: Case[] = [
  {
    label: 'rare brand (brands=brand_rare)',
    text: feedPageOfBrandsStatement.text,
    params: (o) => [o, '0', T, ['brand_rare'], null, null, 101],
  },
  {
    label: 'rare brand + common brand',
    text: feedPageOfBrandsStatement.text,
    params: (o) => [o, '0', T, ['brand_rare', 'brand_a'], null, null, 101],
  },
  {
    label: 'rare brand + subject_types=payout',
    text: feedPageOfBrandsStatement.text,
    params: (o) => [o, '0', T, ['brand_rare'], ['payout'], null, 101],
  },
  { label: 'rare subject type', text: feedPageOfSubjectTypesStatement.text, params: (o) => [o, '0', T, null, ['rare_thing'], null, 101] },
  { label: 'one subject id', text: feedPageOfSubjectStatement.text, params: (o) => [o, '0', T, null, null, 'sub_rare', 101] },
  { label: 'naive: rare brand as a filter on the seq walk', text: naive, params: (o) => [o, '0', 101, ['brand_rare']] },
];

console.log('## Plans (generic, org of 200,000 events)\n');
let n = 0;
for (const k of cases) {
  const name = `bench_filter_${n++}`;
  await c.query({ name, text: k.text, values: k.params('org_bench_big') });
  await c.query(`PREPARE ${name}_x AS ${k.text}`);
  const args = k
    .params('org_bench_big')
    .map((v) =>
      v === null
        ? 'NULL'
        : Array.isArray(v)
          ? `ARRAY[${v.map((x) => `'${x}'`).join(',')}]::text[]`
          : typeof v === 'number'
            ? String(v)
            : `'${v}'`,
    );
  const plan = await c.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) EXECUTE ${name}_x(${args.join(', ')})`);
  const lines = plan.rows.map((r) => r['QUERY PLAN'] as string);
  const scans = lines.filter((l) => / on event /.test(l)).map((l) => l.trim().replace(/^->\s*/, ''));
  const buffers = lines.find((l) => /Buffers: shared/.test(l))?.trim();
  console.log(`- ${k.label}: ${scans.join(' | ')}; ${buffers}`);
}

console.log('\n## Flatness: page time on 200k vs 20k events (interleaved, median of rounds)\n');
async function timeIt(name: string, text: string, params: unknown[], reps: number): Promise<number> {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < reps; i++) await c.query({ name, text, values: params });
  return Number(process.hrtime.bigint() - t0) / 1e6 / reps;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
n = 0;
for (const k of cases) {
  const name = `bench_filter_${n++}`;
  const ratios: number[] = [];
  const bigs: number[] = [];
  const smalls: number[] = [];
  for (let round = 0; round < 8; round++) {
    const small = await timeIt(name, k.text, k.params('org_bench_small'), 20);
    const big = await timeIt(name, k.text, k.params('org_bench_big'), 20);
    ratios.push(big / small);
    bigs.push(big);
    smalls.push(small);
  }
  console.log(
    `- ${k.label}: 200k/20k time ratio ${median(ratios).toFixed(2)} (ms per page ${median(smalls).toFixed(2)} vs ${median(bigs).toFixed(2)})`,
  );
}

console.log('\n## Write cost of the three new indexes (2,000-row batches, interleaved)\n');
await c.query('DROP TABLE IF EXISTS bench_ev_before, bench_ev_after');
await c.query('CREATE TABLE bench_ev_before (LIKE event INCLUDING DEFAULTS)');
await c.query('CREATE TABLE bench_ev_after (LIKE event INCLUDING DEFAULTS)');
for (const tbl of ['bench_ev_before', 'bench_ev_after']) {
  await c.query(`CREATE UNIQUE INDEX ON ${tbl} (id)`);
  await c.query(`CREATE UNIQUE INDEX ON ${tbl} (position)`);
  await c.query(`CREATE UNIQUE INDEX ON ${tbl} (organization_id, seq)`);
  await c.query(`CREATE INDEX ON ${tbl} (organization_id, type, seq)`);
}
await c.query('CREATE INDEX ON bench_ev_after (organization_id, brand_id, seq)');
await c.query('CREATE INDEX ON bench_ev_after (organization_id, subject_type, seq)');
await c.query('CREATE INDEX ON bench_ev_after (organization_id, subject_id, seq)');
let next = 1;
async function batch(tbl: string): Promise<number> {
  const from = next;
  next += 2000;
  const t0 = process.hrtime.bigint();
  await c.query(
    `INSERT INTO ${tbl} (id, organization_id, seq, position, type, subject_type, subject_id, data, brand_id, created_at)
     SELECT 'evt_w' || g, 'org_w' || (g % 50), g, g, 'payout.created', 'payout', 'dist_' || lpad(to_hex(g / 20), 12, '0'), '{"a":1}'::jsonb, 'brand_' || (g % 7), now()
     FROM generate_series($1::int, $1::int + 1999) g`,
    [from],
  );
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
const writeRatios: number[] = [];
const beforeMs: number[] = [];
const afterMs: number[] = [];
for (let round = 0; round < 20; round++) {
  const before = await batch('bench_ev_before');
  const after = await batch('bench_ev_after');
  writeRatios.push(after / before);
  beforeMs.push(before);
  afterMs.push(after);
}
const perRow = (ms: number[]) => ((median(ms) / 2000) * 1000).toFixed(1);
console.log(
  `- insert time with / without the new indexes: ${median(writeRatios).toFixed(2)} (median of 20 interleaved 2,000-row batches; ${perRow(beforeMs)} vs ${perRow(afterMs)} µs per row)`,
);

await c.query('DROP TABLE bench_ev_before, bench_ev_after');
await c.query("DELETE FROM event WHERE organization_id IN ('org_bench_big', 'org_bench_small')");
await c.end();
