import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { createPersistentDatabase, type PersistentDatabase, startAppOn } from '../support/app.ts';
import { buildTenant } from '../support/kit.ts';
import { seedLedger } from '../support/db-access.ts';

/**
 * Exports run in constant memory, proven (issue #17): 100,000 ledger rows seeded in SQL, then a server in a process
 * of its own (a 96 MB old space, --expose-gc) streams the period's export to itself. The memory it holds after a
 * forced GC (JS heap + Buffers) is sampled before the request, once 10,000 rows have arrived and once all 100,000
 * have: a streaming export holds about the same at both, and little more than before; one that buffers the rows or
 * the CSV holds tens of MB more while it answers (or runs out of its old space). Checked to fail against an export
 * that reads every row before writing (ADR 0009).
 */
const ROWS = 100_000;
const DAY = 86_400_000;
const MB = 1024 * 1024;
const ROOT = resolve(import.meta.dirname, '../..');
let database: PersistentDatabase | undefined;
afterAll(async () => {
  await database?.drop();
});

function child(env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const proc = spawn(
    process.execPath,
    ['--expose-gc', '--max-old-space-size=96', '--import', 'tsx', resolve(import.meta.dirname, 'export-memory.child.ts')],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (err += d));
  return new Promise((res) => proc.on('exit', (code) => res({ code, out, err })));
}

test('a 100,000-row ledger export holds the same memory at 10,000 rows and at 100,000', { timeout: 240_000 }, async () => {
  database = await createPersistentDatabase();
  const operatorToken = 'op_test_export_memory_0000000000';
  const seeding = await startAppOn(database, { operatorToken });
  const start = new Date(Math.floor(seeding.clock.now().getTime() / DAY) * DAY - DAY);
  let token: string;
  try {
    const { org, token: secret } = await buildTenant({ ...seeding, operatorToken }, ['payouts:read']);
    token = secret;
    await seedLedger(seeding.app.deps.db.prisma, org.id, org.brands[0]!.id, ROWS, start);
    // The planner's statistics for the rows one statement just wrote, as the maintenance loop (PGlite) or
    // autovacuum (PostgreSQL) would gather them within minutes: without them each page rescans the whole period
    // before its sort (~15 s of CPU for the export). The pages streamed, and so the memory measured, are the same.
    await seeding.app.deps.db.refreshStatistics();
  } finally {
    await seeding.stop(); // the child opens the same PGlite directory: one process at a time
  }
  const run = await child({
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : { DATA_DIR: database.dataDir }),
    TOKEN: token,
    PERIOD: start.toISOString(),
    ROWS: String(ROWS),
  });
  expect(run.code, run.err).toBe(0);
  const { lines, samples } = JSON.parse(run.out.trim().split('\n').at(-1)!);
  expect(lines).toBe(1 + ROWS);
  const total = (s: { heap: number; external: number }) => s.heap + s.external;
  const [before, tenth, all] = [total(samples.before), total(samples.tenth), total(samples.all)];
  const report = JSON.stringify({ before: before / MB, tenth: tenth / MB, all: all / MB });
  // Ten times the rows, about the same memory (a generous ratio, and a floor for noise at small sizes).
  expect(all, report).toBeLessThan(tenth * 1.5 + 4 * MB);
  // And little more than before the request: nothing of the answer is held beyond a few pages in flight.
  expect(tenth - before, report).toBeLessThan(16 * MB);
  console.log(`export memory (MB after GC): ${report} ${JSON.stringify(samples)}`);
});
