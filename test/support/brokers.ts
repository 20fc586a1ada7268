import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Real message brokers for the event-destination tests (issue 34): RabbitMQ,
 * NATS with JetStream and Redis, from Debian's packages, each started here on
 * free loopback ports in a temporary directory, never the packaged services.
 * One of each per test run, shared by every file (test/support/brokers-setup.ts),
 * and stopped by pid: each runs in its own process group, killed whole (RabbitMQ's
 * start script, its Erlang VM and helpers; the epmd it registers with is ours too).
 */
export type BrokerKind = 'rabbitmq' | 'nats' | 'redis';
export type BrokerUrls = Partial<Record<BrokerKind, string>>;

const BINARIES: Record<BrokerKind, string> = {
  rabbitmq: '/usr/lib/rabbitmq/bin/rabbitmq-server',
  nats: '/usr/sbin/nats-server',
  redis: '/usr/bin/redis-server',
};

/** The brokers this machine has (their packages installed). */
export const installedBrokers = (): BrokerKind[] => (Object.keys(BINARIES) as BrokerKind[]).filter((k) => existsSync(BINARIES[k]));

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Running {
  url: string;
  children: ChildProcess[];
}

/** Starts `command` in its own process group and resolves once its output shows `ready`; rejects if it exits first or stays silent. */
function startUntil(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  ready: RegExp,
  what: string,
): Promise<ChildProcess> {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => fail(new Error(`${what} did not start within 60 s:\n${seen.slice(-2000)}`)), 60_000);
    const fail = (e: Error) => {
      clearTimeout(timer);
      stopGroup(child);
      reject(e);
    };
    const onData = (d: Buffer) => {
      seen += d;
      if (!ready.test(seen)) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stderr!.off('data', onData);
      child.stdout!.resume();
      child.stderr!.resume();
      resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`${what} exited with ${code} before it was ready:\n${seen.slice(-2000)}`)));
  });
}

function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    return Promise.resolve(); // already gone
  }
  return exited;
}

async function startRabbitmq(dir: string): Promise<Running> {
  const [port, distPort, epmdPort] = [await freePort(), await freePort(), await freePort()];
  const env = { ...process.env, HOME: dir, ERL_EPMD_PORT: String(epmdPort) };
  // Our own epmd, in the foreground (a child we can stop), on a port of its own: never the machine's.
  const epmd = spawn('epmd', ['-port', String(epmdPort), '-address', '127.0.0.1'], { env, detached: true, stdio: 'ignore' });
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  const server = await startUntil(
    BINARIES.rabbitmq,
    [],
    {
      ...env,
      RABBITMQ_NODENAME: 'rabbit@localhost',
      RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
      RABBITMQ_LOG_BASE: join(dir, 'log'),
      RABBITMQ_LOGS: '-',
      RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
      RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq'),
      RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
      RABBITMQ_NODE_PORT: String(port),
      RABBITMQ_DIST_PORT: String(distPort),
    },
    dir,
    /Server startup complete/,
    'rabbitmq-server',
  ).catch((e) => {
    stopGroup(epmd);
    throw e;
  });
  return { url: `amqp://guest:guest@127.0.0.1:${port}`, children: [server, epmd] };
}

async function startNats(dir: string): Promise<Running> {
  const port = await freePort();
  const server = await startUntil(
    BINARIES.nats,
    ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', join(dir, 'jetstream'), '-m', '0'],
    process.env,
    dir,
    /Server is ready/,
    'nats-server',
  );
  return { url: `nats://127.0.0.1:${port}`, children: [server] };
}

async function startRedis(dir: string): Promise<Running> {
  const port = await freePort();
  const server = await startUntil(
    BINARIES.redis,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
      '--daemonize',
      'no',
    ],
    process.env,
    dir,
    /Ready to accept connections/,
    'redis-server',
  );
  return { url: `redis://127.0.0.1:${port}`, children: [server] };
}

const STARTERS: Record<BrokerKind, (dir: string) => Promise<Running>> = { rabbitmq: startRabbitmq, nats: startNats, redis: startRedis };

/** Starts the given brokers side by side; `stop` kills every process group and removes the directories. */
export async function startBrokers(kinds: BrokerKind[]): Promise<{ urls: BrokerUrls; stop(): Promise<void> }> {
  const dirs: string[] = [];
  const started = await Promise.allSettled(
    kinds.map(async (kind) => {
      const dir = mkdtempSync(join(tmpdir(), `platform-test-${kind}-`));
      dirs.push(dir);
      return [kind, await STARTERS[kind](dir)] as const;
    }),
  );
  const running = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async () => {
    await Promise.all(running.flatMap(([, r]) => r.children.map(stopGroup)));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stop();
    throw (failed as PromiseRejectedResult).reason;
  }
  return { urls: Object.fromEntries(running.map(([kind, r]) => [kind, r.url])), stop };
}
