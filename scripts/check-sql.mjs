// Where SQL may be written, checked by `npm run lint`: a capability's SQL lives in its store
// (`src/domain/<capability>/store.ts`, docs/architecture.md "Stores"); `src/db` holds the ports themselves. Anything
// else that builds SQL (a raw query, a `Prisma.sql` template, a named statement, a Prisma model call) is reported, so
// rule code and the fronts call typed store functions instead.
import { readdirSync, readFileSync, statSync } from 'node:fs';
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
const MARKERS = [
  ['raw query', /\$(queryRaw|executeRaw)(Unsafe)?\b/],
  ['Prisma.sql template', /\bPrisma\.(sql|raw|join|empty)\b/],
  ['named statement', /\bstatement\s*(<[^>]*>)?\s*\(/],
  ['model call', new RegExp(`\\.(${models.join('|')})\\s*\\.\\s*(${MODEL_OPS})\\b`)],
];

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
if (problems.length) {
  console.error(`check-sql: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log('check-sql: SQL only in stores and src/db');
