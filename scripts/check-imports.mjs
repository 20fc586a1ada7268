// The import graph's rules, checked by `npm run lint` (madge builds the graph once, type imports counted):
// - no circle anywhere in src, rest and packages;
// - no import from a lower layer to a higher one (docs/architecture.md, "Wiring"): base (config, clock, logger,
//   metrics, tracing, src/db, packages/shared) < domain < runtime (src/runtime, src/workers) < fronts (src/http,
//   src/graphql, src/mcp, rest) < composition (src/app.ts, src/main.ts, src/cli, the server's build) and the client
//   packages;
// - the client and console packages import nothing of the server (the shared package only).
import { readFileSync } from 'node:fs';
import madge from 'madge';

const root = new URL('..', import.meta.url).pathname;
const config = JSON.parse(readFileSync(new URL('../.madgerc', import.meta.url), 'utf8'));
/** Circles allowed, each with its reason (none today: src/tracing-otel.ts, loaded lazily, shares only types, from src/tracing-types.ts). */
const ALLOWED_CIRCLES = [];

const LAYERS = [
  ['base', /^(src\/(clock|config|logger|metrics|tracing[\w-]*)\.ts|src\/db\/|packages\/shared\/)/],
  ['domain', /^src\/domain\//],
  ['runtime', /^src\/(runtime|workers)\//],
  ['fronts', /^(src\/(http|graphql|mcp)\/|rest\/)/],
  ['composition', /^(src\/(app|main)\.ts|src\/cli\/|scripts\/build-server\.|packages\/(client|console)\/)/],
];
const layerOf = (file) => LAYERS.findIndex(([, re]) => re.test(file));
/** Packages that stay independent of the server: what each may import besides itself. */
const PACKAGES = { 'packages/client/': ['packages/shared/'], 'packages/console/': [], 'packages/shared/': [] };

const res = await madge(['src', 'rest', 'packages'], { ...config, baseDir: root });
const graph = res.obj();
const problems = [];

for (const circle of res.circular()) {
  if (!ALLOWED_CIRCLES.some((allowed) => allowed.join(' > ') === circle.join(' > '))) problems.push(`circle: ${circle.join(' > ')}`);
}
for (const [file, imports] of Object.entries(graph)) {
  const from = layerOf(file);
  const pkg = Object.keys(PACKAGES).find((p) => file.startsWith(p));
  for (const target of imports) {
    if (pkg && !target.startsWith(pkg) && !PACKAGES[pkg].some((p) => target.startsWith(p))) {
      problems.push(`package boundary: ${file} imports ${target}`);
      continue;
    }
    const to = layerOf(target);
    if (from === -1 || to === -1) problems.push(`no layer for ${from === -1 ? file : target} (scripts/check-imports.mjs)`);
    else if (to > from) problems.push(`layer: ${file} (${LAYERS[from][0]}) imports ${target} (${LAYERS[to][0]})`);
  }
}
if (problems.length) {
  console.error(`check-imports: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log(`check-imports: ${Object.keys(graph).length} files, no circle, no upward import`);
