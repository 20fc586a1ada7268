// Where SQL may be written, checked by `npm run lint`: a capability's SQL lives in its store
// (`src/domain/<capability>/store.ts`, docs/architecture.md "Stores"); `src/db` holds the ports themselves. Anything
// else that builds SQL (a raw query, a `Prisma.sql` template, a named statement, a Prisma model call) is reported, so
// rule code and the fronts call typed store functions instead.
// Tests reach the database only through a store or the kit: test/support/db-access.ts holds the reads and writes the
// product has no function for, beside the kit's database plumbing. The test files that must speak SQL themselves are
// listed below with their reason (docs/internals/tests-by-capability.md, "Tests and the database").
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const ROOTS = ['src', 'rest'];
const STORE = /^src\/domain\/[\w-]+\/store\.ts$/;
const PORTS = /^src\/db\//;
/** Files allowed to build SQL outside a store, each with its reason. */
const EXCEPTIONS = {};

const models = [...readFileSync(join(root, 'prisma/schema.prisma'), 'utf8').matchAll(/^model (\w+)/gm)].map(
  ([, m]) => m[0].toLowerCase() + m.slice(1),
);
const MODEL_OPS =
  'findMany|findUnique|findUniqueOrThrow|findFirst|findFirstOrThrow|create|createMany|createManyAndReturn|update|updateMany|updateManyAndReturn|upsert|delete|deleteMany|count|aggregate|groupBy';
const MODEL_CALL = new RegExp(`\\.(${models.join('|')})\\s*\\.\\s*(${MODEL_OPS})\\b`);
const MARKERS = [
  ['raw query', /\$(queryRaw|executeRaw)(Unsafe)?\b/],
  ['Prisma.sql template', /\bPrisma\.(sql|raw|join|empty)\b/],
  ['named statement', /\bstatement\s*(<[^>]*>)?\s*\(/],
  ['model call', MODEL_CALL],
];

const TEST_KIT = new Set(['test/support/db-access.ts', 'test/support/database.ts', 'test/support/global-setup.ts']);
/** Test files that reach the database themselves, each with its reason. */
const TEST_EXCEPTIONS = {
  'test/db/group-commit.test.ts': 'tests the database layer: the group-commit port over the raw drivers',
  'test/db/operation-claim-plan.test.ts': "tests the database layer: the claim statement's plan, read with EXPLAIN",
  'test/db/partial-event-indexes.test.ts': 'tests the database layer: which partial indexes the plans use, read with EXPLAIN',
  'test/db/sql-port.test.ts': 'tests the database layer: the SQL port on both drivers',
  'test/db/pool-listen.test.ts': "tests the database layer: notifications on the pool's connections",
  'test/db/transaction-queue.test.ts': "tests the database layer: PGlite's queue of transactions",
  'test/db/data-dir-permissions.test.ts':
    'owned by a concurrent change; tests the database layer (the data directory after writes), so it stays listed',
  'test/operation/cancel-wake-race.test.ts': "interleaves a second PostgreSQL session's transaction, holding a row lock, with the settle",
  'test/operation/wake-across-processes.test.ts': "cuts the other process's LISTEN connection with pg_terminate_backend",
  'test/stream/sequencer.test.ts': "LISTENs on its own PostgreSQL connection for the sequencer's NOTIFY",
  'test/payout/crash.test.ts': 'kill -9 test: seeds and checks the ledger on its own connection while the servers are killed',
  'test/idempotency/idempotency-upgrade.test.ts': 'migration test: takes the database back to before a migration while no app runs',
  'test/hardening/storage-faults.test.ts': 'creates its database in a tablespace on a disk it fills',
  'test/topology/citus/schema.ts': "reads the migrated schema's catalog (keys, unique indexes, foreign keys) for the Citus report",
  'test/topology/citus/statements.ts': 'configures the statement log of the cluster it starts for the Citus report (ALTER SYSTEM)',
  'test/topology/citus-report.test.ts': 'marks the end of the statement log with a statement of its own, on the cluster it started',
  'test/topology/pgbouncer.test.ts': "turns on its own cluster's statement log and reads PgBouncer's admin console",
  'test/support/patroni.ts': "the failover topology: proves that HAProxy's one host reaches a writable primary",
  'test/topology/failover.test.ts': "counts both processes' LISTEN sessions on the new primary (pg_stat_activity)",
};
/** What a test line reaches the database with: what src may not write either, a SQL port call, a connection of its own. */
const TEST_MARKERS = [
  ...MARKERS.filter(([what]) => what !== 'model call'),
  // Not the client library's resources (`client.connectConfig.update`).
  ['model call', new RegExp(`(?<!client)${MODEL_CALL.source}`)],
  ['SQL port call', /\.sql\.(rows|transaction)\s*\(/],
  [
    'own connection',
    // `pg` is imported as `pg` in tests; a bare `new Client(` is the MCP SDK's client, not a database's.
    /\bnew\s+pg\.(Client|Pool)\s*\(|\bnew\s+PGlite\s*\(|\.(pool|pglite)!?\.(query|exec|connect)\s*\(|\b(adminQuery|sqlSession)\s*\(/,
  ],
];
/** A line without the text of its string literals (an error message may quote `prisma.event.create()`). */
const code = (line) => line.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''");

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'generated' || name === 'node_modules') continue;
    if (statSync(path).isDirectory()) yield* files(path);
    else if (path.endsWith('.ts')) yield relative(root, path);
  }
}

const problems = [];
for (const file of ROOTS.flatMap((r) => [...files(join(root, r))])) {
  if (STORE.test(file) || PORTS.test(file) || EXCEPTIONS[file]) continue;
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (/^\s*(\/\/|\*)/.test(line)) return;
    for (const [what, re] of MARKERS) if (re.test(line)) problems.push(`${file}:${i + 1}: ${what} outside a store`);
  });
}
for (const file of files(join(root, 'test'))) {
  if (TEST_KIT.has(file)) continue;
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const found = [];
  lines.forEach((line, i) => {
    if (/^\s*(\/\/|\*)/.test(line)) return;
    for (const [what, re] of TEST_MARKERS) if (re.test(code(line))) found.push(`${file}:${i + 1}: ${what}`);
  });
  if (TEST_EXCEPTIONS[file]) {
    if (!found.length) problems.push(`${file}: listed as an exception but reaches the database only through the kit or a store`);
  } else problems.push(...found.map((f) => `${f} in a test: use a store or test/support/db-access.ts`));
}
for (const file of Object.keys(TEST_EXCEPTIONS))
  if (!existsSync(join(root, file))) problems.push(`${file}: listed as an exception but missing`);

if (problems.length) {
  console.error(`check-sql: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log('check-sql: SQL only in stores and src/db; tests reach the database through the kit or a store');
