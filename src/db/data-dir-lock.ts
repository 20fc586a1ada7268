import { createHash } from 'node:crypto';
import { mkdirSync, realpathSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One process per embedded data directory. PGlite takes no lock of its own, so two servers on one directory would
 * both write it. The lock is a Unix socket this process listens on: the operating system closes it when the process
 * dies, however it dies, so a crash never leaves a lock that needs clearing by hand. Another process finds the path
 * taken, connects, and is told the holder's pid; a refused connection means the holder died and left only the file,
 * which is replaced.
 */
export interface DataDirLock {
  release(): Promise<void>;
}

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number | undefined,
  ) {
    super(`data directory ${dataDir} is in use by ${pid ? `process ${pid}` : 'another process'}; stop it or set DATA_DIR`);
  }
}

/** sun_path holds 108 bytes with its terminating NUL. */
const SUN_PATH_MAX = 107;

/** `<dataDir>/.lock.sock`, or, when that path is too long for a socket, one under the temp dir keyed by the directory's real path. */
export function lockPath(dataDir: string): string {
  const inside = join(dataDir, '.lock.sock');
  if (Buffer.byteLength(inside) <= SUN_PATH_MAX) return inside;
  const key = createHash('sha256').update(realpathSync(dataDir)).digest('hex').slice(0, 24);
  return join(tmpdir(), `platform-data-${key}.sock`);
}

/** Takes the lock on `dataDir` (created 0700 if missing), or throws DataDirInUseError naming the holder. */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = lockPath(dataDir);
  // Two tries: the second after a stale socket (its holder died) was removed, or a holder released between our listen and connect.
  for (let attempt = 0; ; attempt++) {
    const server = createServer((peer) => peer.end(`${process.pid}\n`));
    const bound = await listen(server, path);
    if (bound === true) return held(server, path);
    if (bound.code !== 'EADDRINUSE' || attempt > 0) throw bound;
    const holder = await askHolder(path);
    if (holder === 'gone') continue;
    if (holder === 'dead') {
      unlinkSync(path);
      continue;
    }
    throw new DataDirInUseError(dataDir, holder);
  }
}

function listen(server: Server, path: string): Promise<true | NodeJS.ErrnoException> {
  return new Promise((resolve) => {
    server.once('error', resolve);
    server.listen(path, () => {
      server.off('error', resolve);
      resolve(true);
    });
  });
}

/** The pid the holder writes; 'dead' when nobody listens on the file; 'gone' when the file vanished meanwhile. */
function askHolder(path: string): Promise<number | undefined | 'dead' | 'gone'> {
  return new Promise((resolve) => {
    let answer = '';
    const peer = connect(path);
    peer.setEncoding('utf8');
    peer.on('data', (d) => (answer += d));
    peer.on('end', () => resolve(Number.parseInt(answer, 10) || undefined));
    peer.on('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code === 'ECONNREFUSED' ? 'dead' : err.code === 'ENOENT' ? 'gone' : undefined),
    );
  });
}

function held(server: Server, path: string): DataDirLock {
  server.unref(); // the lock lives as long as the process; it must not keep an otherwise finished process alive
  // A process that exits without release (process.exit after a failed start) removes its file; a killed one cannot,
  // and the next start finds the socket refused and replaces it.
  const onExit = () => {
    try {
      unlinkSync(path);
    } catch {}
  };
  process.once('exit', onExit);
  return {
    release: () =>
      new Promise<void>((resolve) => {
        process.off('exit', onExit);
        server.close(() => resolve()); // closing a listening Unix socket removes its file
      }),
  };
}
