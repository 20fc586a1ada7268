import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { referencePages } from '../../scripts/docs-reference.ts';
import { ROOT } from './doc-pages.ts';

/** docs/reference/ is generated from docs/openapi/*.json and schema.graphql: a stale page fails here (`npm run docs:reference`). */
test('the API reference under docs/reference/ is what npm run docs:reference writes from the OpenAPI documents and schema.graphql', () => {
  for (const [path, text] of Object.entries(referencePages())) expect(readFileSync(join(ROOT, path), 'utf8'), path).toBe(text);
});

test('the reference lists every REST operation and every GraphQL root field', () => {
  const rest = referencePages()['docs/reference/rest.md']!;
  const surfaceB = JSON.parse(readFileSync(join(ROOT, 'docs/openapi/surface-b.json'), 'utf8')) as { paths: Record<string, object> };
  for (const path of Object.keys(surfaceB.paths)) expect(rest).toContain(` /v1/platform${path}\``);
  const graphql = referencePages()['docs/reference/graphql.md']!;
  for (const field of ['events(', 'createWebhookEndpoint(', 'operation(id: ID!)']) expect(graphql).toContain(`\`${field}`);
});
