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

/** Fixed ports and extra arguments, for a broker one test file owns and restarts (`ownBroker`). */
interface StartOptions {
  ports?: number[];
  args?: string[];
}

async function startRabbitmq(dir: string, own: StartOptions = {}): Promise<Running> {
  const [port, distPort, epmdPort] = own.ports ?? [await freePort(), await freePort(), await freePort()];
  const env = { ...process.env, HOME: dir, ERL_EPMD_PORT: String(epmdPort) };
  // Our own epmd, in the foreground (a child we can stop), on a port of its own: never the machine's.
  const epmd = spawn('epmd', ['-port', String(epmdPort), '-address', '127.0.0.1'], { env, detached: true, stdio: 'ignore' });
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  // Topology a test provisions (`provisionRabbitmq`) is imported at every start, as a deployment provisions it: a
  // binding declared moments before a kill -9 did not always survive the restart (Mnesia had not written it yet).
  const definitions = join(dir, 'definitions.json');
  writeFileSync(join(dir, 'rabbitmq.conf'), existsSync(definitions) ? `load_definitions = ${definitions}\n` : '');
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

async function startNats(dir: string, own: StartOptions = {}): Promise<Running> {
  const [port] = own.ports ?? [await freePort()];
  const server = await startUntil(
    BINARIES.nats,
    ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', join(dir, 'jetstream'), '-m', '0', ...(own.args ?? [])],
    process.env,
    dir,
    /Server is ready/,
    'nats-server',
  );
  return { url: `${own.args?.includes('--tls') ? 'tls' : 'nats'}://127.0.0.1:${port}`, children: [server] };
}

async function startRedis(dir: string, own: StartOptions = {}): Promise<Running> {
  const [port] = own.ports ?? [await freePort()];
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
      ...(own.args ?? []),
    ],
    process.env,
    dir,
    /Ready to accept connections/,
    'redis-server',
  );
  return { url: `redis://127.0.0.1:${port}`, children: [server] };
}

const STARTERS: Record<BrokerKind, (dir: string, own?: StartOptions) => Promise<Running>> = {
  rabbitmq: startRabbitmq,
  nats: startNats,
  redis: startRedis,
};

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

/** How many ports each broker listens on (RabbitMQ: AMQP, Erlang distribution, its own epmd). */
const PORTS: Record<BrokerKind, number> = { rabbitmq: 3, nats: 1, redis: 1 };

export interface OwnBroker {
  url: string;
  dir: string;
  /** Kills it (its whole process group, as a crash would) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same ports and data directory. */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  remove(): Promise<void>;
}

/**
 * A broker for one test file alone (never the run's shared ones), on ports of its own that survive a restart:
 * for the tests that stop and start a broker mid-stream, or need a configuration of their own (`args`).
 */
export async function ownBroker(kind: BrokerKind, args: string[] = []): Promise<OwnBroker> {
  const dir = mkdtempSync(join(tmpdir(), `platform-test-own-${kind}-`));
  const ports: number[] = [];
  for (let i = 0; i < PORTS[kind]; i++) ports.push(await freePort());
  let running: Running | null = await STARTERS[kind](dir, { ports, args });
  const broker: OwnBroker = {
    url: running.url,
    dir,
    stop: async () => {
      const r = running;
      running = null;
      await Promise.all((r?.children ?? []).map(stopGroup));
    },
    start: async () => {
      if (!running) running = await STARTERS[kind](dir, { ports, args });
    },
    remove: async () => {
      await broker.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return broker;
}
