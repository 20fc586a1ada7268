import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/database.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The built server is never stale (ADR 0013): a start rebuilds when a source it was built from changed or is gone,
 * and reuses the build otherwise. Proven on a copy of the build script over a two-file tree, so the checkout's own
 * build, which other files' servers run, is left alone. No database: the PGlite pass runs it.
 */
describe.skipIf(onPostgres())('the server build', () => {
  const tree = mkdtempSync(join(tmpdir(), 'platform-build-'));
  afterAll(() => rmSync(tree, { recursive: true, force: true }));
  mkdirSync(join(tree, 'scripts'));
  mkdirSync(join(tree, 'src/cli'), { recursive: true });
  cpSync(join(ROOT, 'scripts/build-server.mjs'), join(tree, 'scripts/build-server.mjs'));
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
  const answer = join(tree, 'src', 'answer.ts');
  writeFileSync(answer, 'export const answer: number = 1;\n');
  writeFileSync(
    join(tree, 'src/main.ts'),
    "const { answer } = await import('./answer.ts');\nconsole.log(JSON.stringify({ answer, here: import.meta.dirname }));\n",
  );
  writeFileSync(join(tree, 'src/cli/server-commands.ts'), 'export const start = () => undefined;\n');
  /** Runs the built main as bin/platform-server.mjs does: what it prints and the build it ran. */
  const start = () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const { serverEntry } = await import('./scripts/build-server.mjs'); await import(await serverEntry('main'));",
      ],
      { cwd: tree, encoding: 'utf8' },
    );
    const build = (JSON.parse(readFileSync(join(tree, 'dist/server/current.json'), 'utf8')) as { id: string }).id;
    return { ...(JSON.parse(out) as { answer: number; here: string }), build };
  };

  it('builds at the first start, reuses the build while no source changes, and rebuilds after an edit', () => {
    const first = start();
    // The source's own directory, not the bundle's: the code finds files beside its source.
    expect(first).toMatchObject({ answer: 1, here: join(tree, 'src') });
    expect(start().build).toBe(first.build);

    writeFileSync(answer, 'export const answer: number = 2;\n');
    const future = new Date(Date.now() + 5_000);
    utimesSync(answer, future, future);
    const edited = start();
    expect(edited.answer).toBe(2);
    expect(edited.build).not.toBe(first.build);
    // The previous build is kept for a process that may still load it; nothing else has accumulated.
    expect(readdirSync(join(tree, 'dist/server')).sort()).toEqual([first.build, edited.build, 'current.json'].sort());
  });
});
