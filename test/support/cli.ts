import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The `platform` CLI spawned as a process through its bin launcher, against a
 * real server. Each command is a fresh Node process (about a second, more on a
 * loaded machine). `origin()` is read at each call (the file's app starts lazily).
 */
export const CLI_BIN = resolve(import.meta.dirname, '../../bin/platform.mjs');

export function cliRunner(origin: () => string) {
  const cwd = mkdtempSync(join(tmpdir(), 'platform-cli-')); // no ./.data/dev-credentials.json here
  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PLATFORM_')));
    return { ...base, PLATFORM_ORIGIN: origin(), PLATFORM_CREDENTIALS: join(cwd, 'none.json'), ...extra };
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
  return { cwd, env, start, run };
}
