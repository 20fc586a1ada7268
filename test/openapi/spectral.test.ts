import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, it as base, expect } from 'vitest';
import { fileOf, OPENAPI_FILES } from '../../scripts/print-openapi.ts';

/**
 * The committed OpenAPI documents pass Spectral's `oas` rules and the OWASP API Security ruleset under the committed
 * ruleset (.spectral.yaml, where every rule turned off or narrowed says why) with no result at any severity.
 */
const run = promisify(execFile);
const SPECTRAL = new URL('../../node_modules/.bin/spectral', import.meta.url).pathname;
const RULESET = new URL('../../.spectral.yaml', import.meta.url).pathname;

async function lint(files: string[]): Promise<{ code: string; path: string[]; message: string }[]> {
  // Exit code 1 means results were found: read them from stdout either way.
  const out = await run(SPECTRAL, ['lint', ...files, '--ruleset', RULESET, '-f', 'json', '--quiet', '--fail-severity=hint'], {
    maxBuffer: 64 * 1024 * 1024,
  }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
  return out.stdout.trim() ? JSON.parse(out.stdout) : [];
}

/** The documents do not depend on the database: lint them in the embedded run only (CI runs the suite twice). */
const it = process.env.TEST_DATABASE_URL ? base.skip : base;

const scratch = mkdtempSync(join(tmpdir(), 'spectral-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

it('the three documents pass Spectral (oas + OWASP API Security 2023): 0 errors, 0 warnings', { timeout: 120_000 }, async () => {
  const results = await lint(Object.keys(OPENAPI_FILES).map(fileOf));
  expect(results.map((r) => `${r.code}: ${r.message} at ${r.path.join('/')}`)).toEqual([]);
});

it('the narrowed request rules still catch an unbounded request string and array', { timeout: 120_000 }, async () => {
  const doc = JSON.parse(readFileSync(fileOf('/v1/platform/openapi.json'), 'utf8'));
  const body = doc.paths['/webhook_endpoints'].post.requestBody.content['application/json'].schema.properties;
  delete body.url.maxLength;
  delete body.enabled_events.maxItems;
  const file = join(scratch, 'surface-b.json');
  writeFileSync(file, JSON.stringify(doc));
  const codes = (await lint([file])).map((r) => `${r.code} ${r.path.slice(-2).join('/')}`);
  expect(codes).toEqual(expect.arrayContaining(['request-string-limit properties/url', 'request-array-limit properties/enabled_events']));
});
