import { readFileSync } from 'node:fs';
import { printSchema, lexicographicSortSchema } from 'graphql';
import { expect, it } from 'vitest';
import { CONSOLE_TYPES_FILE, consoleTypes } from '../../scripts/console-types.ts';
import { schema } from '../../src/graphql/schema/index.ts';

it('schema.graphql is the printed Pothos schema (run npm run schema:print when this fails)', () => {
  const committed = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
  expect(committed).toBe(`${printSchema(lexicographicSortSchema(schema))}\n`);
});

it("the console's GraphQL types are generated from schema.graphql (run npm run schema:print when this fails)", () => {
  const sdl = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
  expect(readFileSync(CONSOLE_TYPES_FILE, 'utf8')).toBe(consoleTypes(sdl));
});
