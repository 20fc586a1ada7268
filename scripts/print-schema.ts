// Prints the Pothos schema to schema.graphql (committed), and the console's types generated from it
// (packages/console/src/schema.ts). `--check` exits 1 when either file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { printSchema, lexicographicSortSchema } from 'graphql';
import { schema } from '../src/graphql/schema/index.ts';
import { CONSOLE_TYPES_FILE, consoleTypes } from './console-types.ts';

export const SCHEMA_FILE = new URL('../schema.graphql', import.meta.url).pathname;
export const printed = () => `${printSchema(lexicographicSortSchema(schema))}\n`;

if (process.argv.includes('--check')) {
  if (readFileSync(SCHEMA_FILE, 'utf8') !== printed() || readFileSync(CONSOLE_TYPES_FILE, 'utf8') !== consoleTypes(printed())) {
    console.error('schema.graphql or the console types are stale: run npm run schema:print');
    process.exit(1);
  }
} else {
  writeFileSync(SCHEMA_FILE, printed());
  writeFileSync(CONSOLE_TYPES_FILE, consoleTypes(printed()));
  console.log(`wrote ${SCHEMA_FILE} and ${CONSOLE_TYPES_FILE}`);
}
