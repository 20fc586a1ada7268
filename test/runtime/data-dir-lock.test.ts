import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDirInUseError, lockDataDir, lockPath } from '../../src/db/data-dir-lock.ts';
import { createTestDatabase, onPostgres, seedDataDir, type TestDatabase } from '../support/database.ts';
import { failedStart, spawnServer } from '../support/ops-process.ts';

/**
 * One process per embedded data directory, and start-up failures told in one line. Every case is a real process:
 * the server (`node bin/platform-server.mjs`, what `npm start` runs) or the `platform` CLI. The lock is the embedded
 * database's: its tests run on PGlite runs, where the migrated template seeds each directory (no migrations at start).
 */
const root = mkdtempSync(join(tmpdir(), 'data-dir-lock-'));
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
  rmSync(root, { recursive: true, force: true });
});

/** A data directory of its own, seeded from the migrated PGlite template. */
async function dataDir(name: string): Promise<string> {
  const dir = join(root, name);
  await seedDataDir(database, dir);
  return dir;
}

/** The database a start-up failure test's server opens: a seeded directory, or the file's PostgreSQL database. */
async function serverDatabase(name: string): Promise<Record<string, string>> {
  return onPostgres() ? { DATABASE_URL: database.databaseUrl! } : { DATA_DIR: await dataDir(name) };
}

const quiet = { PORT: '0', LOG_LEVEL: 'silent', BOOTSTRAP: '0' };
/** A start takes seconds, and up to a minute on a loaded 2-core machine; a test here starts up to three processes. */
const START_MS = 150_000;
const slow = { timeout: 400_000 };
const STACK = /\n\s+at /;

describe.skipIf(onPostgres())('one process per embedded data directory', slow, () => {
  // One holder serves the three refusals and then dies by kill -9: each server start costs seconds, so they are shared.
  it('while a server holds the directory, a second server exits 1 with one line naming the holder and platform migrate refuses it; after kill -9 of the holder the next start succeeds and exits 0 on SIGTERM', async () => {
    const dir = await dataDir('held');
    const first = await spawnServer({ ...quiet, DATA_DIR: dir }, START_MS);
    try {
      const second = await failedStart({ ...quiet, DATA_DIR: dir });
      expect(second.code).toBe(1);
      expect(second.stderr).toBe(`data directory ${dir} is in use by process ${first.child.pid}; stop it or set DATA_DIR\n`);
      expect(second.stdout).not.toContain('listening');
      expect((await fetch(`${first.origin}/healthz`)).status).toBe(200);

      const cli = spawn(process.execPath, [resolve(import.meta.dirname, '../../bin/platform.mjs'), 'migrate'], {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dir, LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      cli.stderr!.on('data', (d) => (stderr += d));
      const [code] = await once(cli, 'close');
      expect(code).not.toBe(0);
      expect(stderr).toBe(`error: data directory ${dir} is in use by process ${first.child.pid}; stop it or set DATA_DIR\n`);
    } finally {
      expect((await first.stop('SIGKILL')).signal).toBe('SIGKILL');
    }
    // The lock died with its holder.
    const next = await spawnServer({ ...quiet, DATA_DIR: dir }, START_MS);
    expect((await fetch(`${next.origin}/readyz`)).status).toBe(200);
    expect((await next.stop('SIGTERM', START_MS)).code).toBe(0);
    expect(existsSync(join(dir, '.lock.sock'))).toBe(false); // a clean stop leaves no lock file behind
  });

  it('a directory whose socket path would pass the 108-byte limit locks through a socket in the temp directory', async () => {
    const dir = join(root, 'x'.repeat(120));
    mkdirSync(dir);
    expect(lockPath(dir).startsWith(tmpdir())).toBe(true);
    const lock = await lockDataDir(dir);
    try {
      await expect(lockDataDir(dir)).rejects.toThrow(new DataDirInUseError(dir, process.pid));
    } finally {
      await lock.release();
    }
    await (await lockDataDir(dir)).release();
  });
});

describe('start-up failures: one line, exit 1, a stack only at LOG_LEVEL=debug', slow, () => {
  it('a port in use: told before the database opens; taken after it opened, the start stops and releases the directory', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const { port } = taken.address() as { port: number };
    try {
      const db = await serverDatabase('port');
      const failed = await failedStart({ ...quiet, ...db, PORT: String(port) });
      expect(failed.code).toBe(1);
      expect(failed.stderr).toBe(`port ${port} on 127.0.0.1 is in use by another process; stop it or set PORT (or HOST)\n`);
      // The metrics port is bound by the started application, after the database opened: the failed start stops what
      // it started, so the embedded directory's lock is free again.
      const late = await failedStart({ ...quiet, ...db, METRICS_LISTEN: `127.0.0.1:${port}`, LOG_LEVEL: 'debug' });
      expect(late.code).toBe(1);
      expect(late.stderr.split('\n')[0]).toBe(`port ${port} on 127.0.0.1 is in use by another process; stop it or set METRICS_LISTEN`);
      expect(late.stderr).toMatch(STACK);
      expect(late.stderr).toContain('EADDRINUSE');
      if (db.DATA_DIR) await (await lockDataDir(db.DATA_DIR)).release();
    } finally {
      taken.close();
    }
  });

  // These two open no database: they run once, in the PGlite pass (CI runs the suite on both).
  it.skipIf(onPostgres())('bad configuration lists each invalid setting', async () => {
    const failed = await failedStart({ ...quiet, DATA_DIR: 'memory://', PORT: 'eighty', LOG_LEVEL: 'loud' });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^Invalid configuration:\n {2}\S.*\n {2}\S.*\n$/);
    expect(failed.stderr).toContain('PORT');
    expect(failed.stderr).toContain('LOG_LEVEL');
  });

  it.skipIf(onPostgres())('PostgreSQL unreachable: the line names host and port, never the password', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as { port: number };
    await new Promise((r) => closed.close(r)); // a port nobody listens on
    const failed = await failedStart({ ...quiet, DATABASE_URL: `postgres://app:s3cret@127.0.0.1:${port}/platform` });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe(`PostgreSQL at 127.0.0.1:${port}/platform is unreachable (ECONNREFUSED); check DATABASE_URL\n`);
  });

  it.runIf(onPostgres())('PostgreSQL refusing the login (no such role)', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.username = 'no_such_role';
    const failed = await failedStart({ ...quiet, DATABASE_URL: url.toString() });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^PostgreSQL at \S+ refused the connection: .*no_such_role.* \(28\w{3}\); check DATABASE_URL\n$/);
    expect(failed.stderr).not.toMatch(STACK);
  });
});
