import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { canonicalDocument, fileOf, OPENAPI_FILES } from '../../scripts/print-openapi.ts';
import { appTest } from '../support/kit.ts';

const test = appTest();

test.for(Object.entries(OPENAPI_FILES))('%s is committed as %s and is current', async ([path, file], { app }) => {
  const res = await app.http.get(path);
  expect(res.status).toBe(200);
  const served = canonicalDocument(res.body, app.origin);
  expect(served === readFileSync(fileOf(path), 'utf8'), `${file} is stale: run npm run openapi:print`).toBe(true);
});
