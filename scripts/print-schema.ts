// Prints the Pothos schema to schema.graphql (committed). `--check` exits 1 when the file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { printSchema, lexicographicSortSchema } from 'graphql';
import { schema } from '../src/graphql/schema/index.ts';

export const SCHEMA_FILE = new URL('../schema.graphql', import.meta.url).pathname;
export const printed = () => `${printSchema(lexicographicSortSchema(schema))}\n`;

if (process.argv.includes('--check')) {
  if (readFileSync(SCHEMA_FILE, 'utf8') !== printed()) {
    console.error('schema.graphql is stale: run npm run schema:print');
    process.exit(1);
  }
} else {
  writeFileSync(SCHEMA_FILE, printed());
  console.log(`wrote ${SCHEMA_FILE}`);
}
