import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { canonicalDocument, fileOf, OPENAPI_FILES } from '../../scripts/print-openapi.ts';
import { rawRequest } from '../support/http.ts';
import { appTest } from '../support/kit.ts';

const test = appTest();

test.for(Object.entries(OPENAPI_FILES))('%s is committed as %s and is current', async ([path, file], { app }) => {
  const res = await app.http.get(path);
  expect(res.status).toBe(200);
  const served = canonicalDocument(res.body, app.origin);
  expect(served === readFileSync(fileOf(path), 'utf8'), `${file} is stale: run npm run openapi:print`).toBe(true);
});

test('a document is built once and served compressed, revalidated by its ETag (a public route rebuilds nothing)', async ({ app }) => {
  const first = await app.http.request('GET', '/v1/platform/openapi.json', undefined, { headers: { 'accept-encoding': 'br' } });
  expect(first.status).toBe(200);
  expect(first.headers.get('content-encoding')).toBe('br');
  expect(first.headers.get('cache-control')).toBe('no-cache');
  const etag = first.headers.get('etag')!;
  expect(etag).toMatch(/^"[0-9a-f]{20}-br"$/);
  // rawRequest: fetch adds `Cache-Control: no-cache` beside an If-None-Match, which asks the server not to answer 304.
  const again = await rawRequest(app.origin, 'GET', '/v1/platform/openapi.json', { 'accept-encoding': 'br', 'if-none-match': etag });
  expect(again.status).toBe(304);
  // Each document is its own: the dashboard document is not the Surface B one.
  const dashboard = await app.http.get('/openapi.json');
  expect((dashboard.body as { info: { title: string } }).info.title).not.toBe((first.body as { info: { title: string } }).info.title);
});
