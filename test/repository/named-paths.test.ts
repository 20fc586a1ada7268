import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
/** A repository path with an extension, as comments and docs name files (`src/domain/action/action.ts`). */
const NAMED =
  /(?<![\w./@-])((?:src|test|rest|scripts|packages|docs|bench|prisma|bin|\.ci)\/[\w./-]*\.(?:ts|mts|mjs|md|json|prisma|sql|graphql|yaml))(?![\w/-])/g;
/** Records of the past, which name files as they were: the CHANGELOG, the benchmark history, the decision records and the table of the tests' moves. */
const HISTORY = /^(CHANGELOG\.md|bench\/HISTORY\.md|docs\/adr\/|docs\/internals\/tests-by-capability\.md$)/;
const GENERATED = /^(src\/db\/generated\/|docs\/reference\/|prisma\/migrations\/|package-lock\.json$)/;

describe('the repository', () => {
  it('names only files that exist, in comments, docs and scripts', () => {
    const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\n');
    const stale: string[] = [];
    for (const file of files) {
      if (!/\.(ts|mts|mjs|md|json|yaml|prisma)$/.test(file) || HISTORY.test(file) || GENERATED.test(file)) continue;
      if (!existsSync(join(ROOT, file))) continue; // deleted in the working tree, not yet staged
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          for (const [, path] of line.matchAll(NAMED)) {
            // A package's README names its own files relative to its folder.
            if (!existsSync(join(ROOT, path!)) && !existsSync(join(ROOT, dirname(file), path!))) stale.push(`${file}:${i + 1}: ${path}`);
          }
        });
    }
    expect(stale).toEqual([]);
  });
});
