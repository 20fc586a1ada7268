import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/db/schema-engine.ts';

/**
 * Prisma's PostgreSQL adapter runs a migration by splitting its text on every `;` and sending each piece alone
 * (`executeScript` in @prisma/adapter-pg). A `;` inside a comment with more text after it on the same line, or inside a
 * dollar-quoted body (a plpgsql function's statements), cuts a statement in two: PGlite runs the script whole and passes, PostgreSQL
 * fails at deploy. This check names the line before either database sees it.
 */
test('no migration holds a `;` the PostgreSQL adapter would split a statement on', () => {
  const problems: string[] = [];
  for (const dir of readdirSync(MIGRATIONS_DIR, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    const text = readFileSync(join(MIGRATIONS_DIR, dir.name, 'migration.sql'), 'utf8');
    text.split('\n').forEach((line, i) => {
      const comment = line.indexOf('--');
      if (comment >= 0 && /;\s*\S/.test(line.slice(comment))) problems.push(`${dir.name}:${i + 1}: text after a ';' in a comment`);
    });
    for (const body of text.matchAll(/(\$[A-Za-z_]*\$)([\s\S]*?)\1/g))
      if (body[2]!.includes(';')) problems.push(`${dir.name}: a ';' inside the dollar-quoted body ${body[1]}…${body[1]}`);
  }
  expect(problems).toEqual([]);
  expect(readdirSync(MIGRATIONS_DIR).length).toBeGreaterThan(10);
});
