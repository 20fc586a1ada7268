import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, onPostgres, seedDataDir, type TestDatabase } from '../support/database.ts';
import { spawnServer, type Launch } from '../support/ops-process.ts';

/**
 * A supervisor (systemd, a container runtime, a process manager) signals the one process it started. Whichever way
 * the server is started, that signal drains the server and ends it: the port is released and the process the
 * supervisor watches exits 0. Before `npm start` ran its command with `exec`, SIGTERM to npm ended npm and its shell
 * and left the server serving.
 */
const root = mkdtempSync(join(tmpdir(), 'signals-'));
let database: TestDatabase;
/** The migrated template, written once (PGlite): each server gets a copy of its own, a file copy instead of a load. */
const seeded = join(root, 'seeded');
beforeAll(async () => {
  database = await createTestDatabase();
  if (!onPostgres()) await seedDataDir(database, seeded);
});
afterAll(async () => {
  await database.drop();
  rmSync(root, { recursive: true, force: true });
});

/** Resolves with the error code of a TCP connection to `origin` (undefined when something still accepts). */
function connectError(origin: string): Promise<string | undefined> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => (socket.destroy(), resolve(undefined)));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code));
  });
}

// Signal handling does not depend on the database: the PGlite pass proves it. Each form meets each signal once (a
// start costs seconds): with `exec`, npm start's process is the server itself, so both forms run one handler. The two
// run side by side: each is its own process on its own data directory and port.
describe.skipIf(onPostgres()).concurrent.each<[Launch, string, NodeJS.Signals]>([
  ['npm start', 'npm start (npm is the supervised process)', 'SIGTERM'],
  ['bin', 'node bin/platform-server.mjs (the production start command)', 'SIGINT'],
])('%s', (launch, title, signal) => {
  it(`${title}: ${signal} drains the server, releases the port, exits 0`, async () => {
    const dataDir = join(root, `${launch}-${signal}`.replace(/\W/g, '-'));
    if (!onPostgres()) cpSync(seeded, dataDir, { recursive: true });
    const env = {
      PORT: '0',
      LOG_LEVEL: 'info',
      BOOTSTRAP: '0',
      ...(onPostgres() ? { DATABASE_URL: database.databaseUrl! } : { DATA_DIR: dataDir }),
    };
    const server = await spawnServer(env, 150_000, { launch });
    expect((await fetch(`${server.origin}/healthz`)).status).toBe(200);
    const stopped = await server.stop(signal, 20_000);
    expect(stopped, server.output()).toMatchObject({ code: 0, signal: null });
    expect(server.output()).toContain(`"signal":"${signal}","msg":"draining"`);
    // The watched process has exited; the server was its child (npm) or itself (bin): nothing answers on the port.
    expect(await connectError(server.origin)).toBe('ECONNREFUSED');
  }, 240_000); // a start takes seconds, and up to a minute on a loaded 2-core machine
});
