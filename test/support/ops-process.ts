import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase, serverEnv, type TestDatabase } from './database.ts';

/** The server as a real child process (bin/platform-server.mjs, what `npm start` runs) with the given environment. */
export interface ServerProcess {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** The API origin parsed from the startup banner. */
  origin: string;
  /** Sends `signal` and resolves with the exit code (null on timeout, after which the child is killed). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

const ROOT = resolve(import.meta.dirname, '../..');

/** How a test starts the server: the production entry point (what `npm start` runs), or through `npm start` itself. */
export type Launch = 'npm start' | 'bin';

const LAUNCH: Record<Launch, [string, string[]]> = {
  'npm start': ['npm', ['start']],
  bin: [process.execPath, ['bin/platform-server.mjs']],
};

/**
 * Runs the server as a real child process. By default `node bin/platform-server.mjs`, so the child IS the server and
 * signals reach it directly; `launch: 'npm start'` runs npm (npm is the child: its own process group, as a supervisor
 * starts it), to test what a supervisor's signal does to each. The run's global setup built the server once.
 */
export async function spawnServer(
  env: Record<string, string>,
  // A cold start loads the app and migrates a fresh database: 10 to 15 s alone, past 45 s on a loaded CI run.
  startTimeoutMs = 90_000,
  opts: { launch?: Launch } = {},
): Promise<ServerProcess> {
  const [command, args] = LAUNCH[opts.launch ?? 'bin'];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', npm_config_update_notifier: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.launch === 'npm start',
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.once('exit', (code, signal) => res({ code, signal })),
  );

  const origin = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => {
      // Leave nothing running: npm's process group holds the server npm started.
      if (opts.launch === 'npm start') process.kill(-child.pid!, 'SIGKILL');
      else child.kill('SIGKILL');
      rej(new Error(`no banner within ${startTimeoutMs} ms:\n${out}`));
    }, startTimeoutMs);
    const check = () => {
      const m = /Health\s+(http:\/\/\S+)\/healthz/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    void exited.then(({ code }) => {
      clearTimeout(timer);
      rej(new Error(`server exited with ${code} before its banner:\n${out}`));
    });
  });

  return {
    child,
    origin,
    output: () => out,
    stop: async (signal = 'SIGTERM', timeoutMs = 10_000) => {
      const started = Date.now();
      child.kill(signal);
      const timeout = new Promise<null>((res) => setTimeout(() => res(null), timeoutMs).unref());
      const result = await Promise.race([exited, timeout]);
      if (!result) {
        child.kill('SIGKILL');
        return { code: null, signal: null, ms: Date.now() - started };
      }
      return { ...result, ms: Date.now() - started };
    },
  };
}

/** A start that is meant to fail: runs `node bin/platform-server.mjs` with `env` to its exit. */
export async function failedStart(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['bin/platform-server.mjs'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'close')) as [number | null]; // 'close': after the last output, not only the exit
  return { code, stdout, stderr };
}

/**
 * For a describe block that runs real server processes on one PostgreSQL
 * database: a fresh database (a copy of the run's template) before its tests;
 * after them every process it spawned stopped with `stopWith` (SIGTERM and
 * drain by default) and the database dropped. `spawn` adds the database (serverEnv).
 */
export function serverProcesses(stopWith: (c: ServerProcess) => Promise<unknown> = (c) => c.stop('SIGTERM', 15_000)) {
  const fleet = {
    database: undefined as TestDatabase | undefined,
    children: [] as ServerProcess[],
    async spawn(env: Record<string, string>, startTimeoutMs?: number): Promise<ServerProcess> {
      const c = await spawnServer({ ...serverEnv(fleet.database!), ...env }, startTimeoutMs);
      fleet.children.push(c);
      return c;
    },
  };
  beforeAll(async () => {
    fleet.database = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(fleet.children.map(stopWith));
    await fleet.database?.drop();
  });
  return fleet;
}

/**
 * Polls `probe` (every 50 ms: another process's state, which no event of this one announces) until it answers; fails
 * after `ms`, with `detail()` (the processes' logs, say) in the message.
 */
export async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>, detail?: () => string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${detail ? `\n${detail()}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The environment of a process a crash test kills: no bootstrap, no webhook worker, a short lease and poll, and a
 * recheck far beyond every deadline (whatever settles after a kill was resumed through its expired lease).
 */
export const crashWorkerEnv = (operatorToken: string, leaseMs: number): Record<string, string> => ({
  PORT: '0',
  OPERATOR_TOKEN: operatorToken,
  BOOTSTRAP: '0',
  LOG_LEVEL: 'silent',
  OPERATION_LEASE_MS: String(leaseMs),
  OPERATIONS_POLL_MS: '100',
  OPERATION_RECHECK_MS: '600000',
  WEBHOOK_WORKER: '0',
});
