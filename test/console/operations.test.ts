import { readdirSync, readFileSync } from 'node:fs';
import { buildSchema, parse, validate } from 'graphql';
import { expect, it } from 'vitest';

/**
 * Every GraphQL document the console sends (the exported constants of its view modules) is valid against
 * schema.graphql; their results are typed as picks of the types generated from it (packages/console/src/schema.ts,
 * checked by tsc), so a schema change that breaks the console fails here or in `tsc`, not in a browser.
 */
it('every GraphQL operation of the console validates against schema.graphql', async () => {
  const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));
  const dir = new URL('../../packages/console/src/views/', import.meta.url);
  const modules = [new URL('../../packages/console/src/viewer.ts', import.meta.url), ...readdirSync(dir).map((f) => new URL(f, dir))];
  const documents: [string, string][] = [];
  for (const url of modules) {
    for (const [name, value] of Object.entries(await import(url.href))) {
      if (typeof value === 'string' && /^\s*(query|mutation|subscription|\{)/.test(value))
        documents.push([`${url.pathname}:${name}`, value]);
    }
  }
  expect(documents.length).toBeGreaterThanOrEqual(15);
  for (const [where, doc] of documents)
    expect(
      validate(schema, parse(doc)).map((e) => e.message),
      where,
    ).toEqual([]);
});
