// The server runs as built JavaScript (docs/adr/0013-server-runs-built.md): its TypeScript sources (src/, rest/ and
// what they import from packages/) bundled by esbuild into dist/server/<build>/, npm packages left as imports. A start
// through a TypeScript loader spent about 2.5 s of CPU of its 6 in the loader's hooks on Node 20 (profiled); built, a
// start costs 3.5.
//
// `serverEntry()` is what every start calls (bin/platform-server.mjs, `npm start`, the CLI's server commands): it
// answers the current build, and builds first when any source it was built from is newer than it (an edit, a
// checkout), so a developer never runs stale code. `npm install` builds once (postinstall); `node
// scripts/build-server.mjs` builds again.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist', 'server');
const MANIFEST = join(OUT, 'current.json');
const ENTRIES = { main: 'src/main.ts', 'server-commands': 'src/cli/server-commands.ts' };
/** A build other than the current and the previous one is deleted once this old: a process may still be loading it. */
const PRUNE_AFTER_MS = 10 * 60_000;

/** The file URL of entry `name` ('main' or 'server-commands') in a build no older than its sources. */
export async function serverEntry(name) {
  const build = fresh() ?? (await buildServer());
  return pathToFileURL(join(OUT, build.id, `${name}.js`)).href;
}

/** The current build when every source it was built from is still there and unchanged since, else undefined. */
function fresh() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
    for (const input of manifest.inputs) if (statSync(join(ROOT, input)).mtimeMs > manifest.started) return undefined;
  } catch {
    return undefined;
  }
  return manifest;
}

/**
 * Bundles the entries into a new directory, then points the manifest at it (a rename: a concurrent start reads the old
 * manifest or the new, never half of one). Code splitting keeps main.ts's lazy imports lazy: a bad setting is still
 * told before the application and its packages load.
 */
export async function buildServer() {
  const { build } = await import('esbuild');
  const started = Date.now();
  const id = `${started.toString(36)}-${process.pid}`;
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ENTRIES,
    outdir: join(OUT, id),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'error',
    plugins: [sourceLocations],
  });
  const previous = (() => {
    try {
      return JSON.parse(readFileSync(MANIFEST, 'utf8')).id;
    } catch {
      return undefined;
    }
  })();
  const manifest = { id, started, inputs: Object.keys(result.metafile.inputs) };
  mkdirSync(OUT, { recursive: true });
  const tmp = `${MANIFEST}.${process.pid}`;
  writeFileSync(tmp, JSON.stringify(manifest));
  renameSync(tmp, MANIFEST);
  for (const entry of readdirSync(OUT, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === id || entry.name === previous) continue;
    const dir = join(OUT, entry.name);
    if (Date.now() - statSync(dir).mtimeMs > PRUNE_AFTER_MS) rmSync(dir, { recursive: true, force: true });
  }
  return manifest;
}

/**
 * A source's `import.meta.url`, `dirname` and `filename` keep naming the source file, not the bundle: the code finds
 * prisma/migrations, docs/ and packages/console/ relative to itself.
 */
const sourceLocations = {
  name: 'source-locations',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?ts$/ }, async ({ path }) => {
      const contents = (await readFile(path, 'utf8'))
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(path)))
        .replaceAll('import.meta.filename', JSON.stringify(path));
      return { contents, loader: 'ts' };
    });
  },
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { id } = await buildServer();
  console.log(`build-server: dist/server/${id}`);
}
