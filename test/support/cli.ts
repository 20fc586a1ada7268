import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The `platform` CLI spawned as a process through its bin launcher, against a
 * real server. Each command is a fresh Node process running the built CLI
 * (dist/cli/platform.js and packages/client/dist), rebuilt first when a source
 * is newer. `origin()` is read at each call (the file's app starts lazily).
 * Its profiles live in this runner's own directory (XDG_CONFIG_HOME), never
 * in the machine's home.
 */
export const CLI_BIN = resolve(import.meta.dirname, '../../bin/platform.mjs');
const ROOT = resolve(import.meta.dirname, '../..');

export function cliRunner(origin: () => string) {
  const cwd = mkdtempSync(join(tmpdir(), 'platform-cli-')); // no ./.data/dev-credentials.json here
  const configHome = join(cwd, 'config');
  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PLATFORM_') && k !== 'XDG_CONFIG_HOME'));
    return {
      ...base,
      HOME: cwd,
      XDG_CONFIG_HOME: configHome,
      PLATFORM_ORIGIN: origin(),
      PLATFORM_CREDENTIALS: join(cwd, 'none.json'),
      ...extra,
    };
  };
  const start = (args: string[], extra: Record<string, string> = {}, stdin?: string) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], {
      cwd,
      env: env(extra),
      stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (stdin !== undefined) child.stdin!.end(stdin);
    const out = { stdout: '', stderr: '' };
    child.stdout!.on('data', (d) => (out.stdout += d));
    child.stderr!.on('data', (d) => (out.stderr += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    return { child, out, exited };
  };
  const run = async (args: string[], extra: Record<string, string> = {}, stdin?: string) => {
    const { out, exited } = start(args, extra, stdin);
    const code = await exited;
    return { code, ...out };
  };
  /** Where `platform login` saves profiles for this runner. */
  const profilesFile = join(configHome, 'platform', 'config.json');
  return { cwd, env, start, run, profilesFile };
}

const newest = (path: string): number =>
  statSync(path).isDirectory() ? Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name)))) : statSync(path).mtimeMs;
const built = (path: string) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
};
const fresh = () =>
  built(join(ROOT, 'dist/cli/platform.js')) >=
  Math.max(newest(join(ROOT, 'packages/client/src')), newest(join(ROOT, 'src/cli/platform.ts')));

/**
 * Builds the CLI as `npm install` does when a source is newer than the build, so a test runs the code it reads.
 * Test files run in parallel processes: one builds while holding a lock directory, the others wait for it.
 */
export async function ensureCliBuilt(): Promise<void> {
  if (fresh()) return;
  const lock = join(ROOT, 'dist', '.cli-build.lock');
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() - built(lock) > 300_000) rmSync(lock, { recursive: true, force: true }); // left by a killed run
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    if (fresh()) return;
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    for (const project of ['packages/client', 'src/cli'])
      execFileSync(process.execPath, [tsc, '-p', join(ROOT, project)], { stdio: 'inherit' });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

await ensureCliBuilt();
