// Writes the three OpenAPI documents to docs/openapi/ (committed), as a server
// on the documented default origin serves them. `--check` exits 1 when a file
// is stale. The documents are generated from the route declarations at
// runtime; these copies let a reader (or a code generator) use them offline,
// and review shows every change to the public contract.
import { readFileSync, writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';

/** Document path on the server → committed file. */
export const OPENAPI_FILES: Record<string, string> = {
  '/api/openapi.json': 'docs/openapi/surface-a.json',
  '/v1/platform/openapi.json': 'docs/openapi/surface-b.json',
  '/openapi.json': 'docs/openapi/dashboard.json',
};

/** The origin the committed documents name (the default HOST and PORT). */
export const DOCUMENTED_ORIGIN = 'http://127.0.0.1:4000';

/** A served document as committed: the serving origin replaced by the documented one, two-space JSON. */
export const canonicalDocument = (body: unknown, origin: string) =>
  `${JSON.stringify(body, null, 2).replaceAll(origin, DOCUMENTED_ORIGIN)}\n`;

export const fileOf = (documentPath: string) => new URL(`../${OPENAPI_FILES[documentPath]}`, import.meta.url).pathname;

async function main() {
  const config = loadConfig({ LOG_LEVEL: 'silent' }, { host: '127.0.0.1', port: 0, dataDir: 'memory://', bootstrap: false });
  const app = await buildApp(config);
  await app.start();
  const stale: string[] = [];
  try {
    for (const path of Object.keys(OPENAPI_FILES)) {
      const res = await fetch(app.urls.api_origin + path);
      const text = canonicalDocument(await res.json(), app.urls.api_origin);
      if (!process.argv.includes('--check')) writeFileSync(fileOf(path), text);
      else if (readFileSync(fileOf(path), 'utf8') !== text) stale.push(OPENAPI_FILES[path]!);
    }
  } finally {
    await app.stop();
  }
  if (stale.length) {
    console.error(`stale: ${stale.join(', ')}: run npm run openapi:print`);
    process.exit(1);
  }
  if (!process.argv.includes('--check')) console.log(`wrote ${Object.values(OPENAPI_FILES).join(', ')}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
