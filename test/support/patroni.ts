import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './brokers.ts';
import { until } from './ops-process.ts';

/**
 * A highly available PostgreSQL for the failover test (issue 36), from Debian's packages: one etcd member (Patroni's
 * `etcd3:` section: etcd 3.4 serves no v2 API), two Patroni nodes each managing a PostgreSQL 15 (a primary and a
 * synchronous standby), and HAProxy in front, sending connections to whichever node Patroni's REST `/primary` answers
 * 200 and cutting the sessions of a node it marks down, so the product sees one host (node-postgres parses no
 * multi-host URL). Everything listens on free loopback ports and lives in one temporary directory; PostgreSQL and
 * Patroni run as the `postgres` user when this process is root (initdb refuses root). Every process is started here
 * and stopped by its pid: etcd, HAProxy and each Patroni are children; each PostgreSQL is Patroni's child (in a
 * session of its own), known by its data directory's postmaster.pid.
 *
 * By hand: `node --import tsx test/support/patroni.ts` starts it, prints the URL and the `patronictl` command, and
 * stops everything on Ctrl-C (docs/operating/failover.md).
 */
export const BINARIES = {
  'etcd-server': '/usr/bin/etcd',
  patroni: '/usr/bin/patroni',
  patronictl: '/usr/bin/patronictl',
  haproxy: '/usr/sbin/haproxy',
  'postgresql-15': '/usr/lib/postgresql/15/bin/postgres',
} as const;
const PG_BIN = '/usr/lib/postgresql/15/bin';
const execFileAsync = promisify(execFile);

/** The Debian packages this topology needs and this machine lacks. */
export const missingTopologyPackages = (): string[] => Object.entries(BINARIES).flatMap(([pkg, bin]) => (existsSync(bin) ? [] : [pkg]));

/** The dynamic configuration the issue names: Patroni's timings, synchronous replication, pg_rewind. */
const DCS = {
  ttl: 10,
  loop_wait: 2,
  retry_timeout: 4,
  primary_start_timeout: 0,
  synchronous_mode: true,
  postgresql: {
    use_pg_rewind: true,
    use_slots: true,
    parameters: { wal_log_hints: 'on', max_connections: 200, max_wal_senders: 10, max_replication_slots: 10, wal_keep_size: '256MB' },
  },
};

export interface Member {
  name: string;
  role: string;
  state: string;
  timeline?: number;
  lag?: number | string;
}

export interface PatroniNode {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  config: string;
  /** The running Patroni (undefined once killed or stopped). */
  patroni: ChildProcess | undefined;
}

export interface Topology {
  /** The product's DATABASE_URL: HAProxy's one host. */
  url: string;
  dir: string;
  nodes: PatroniNode[];
  node(name: string): PatroniNode;
  /** The cluster as Patroni's REST `/cluster` reports it (from the first node that answers). */
  members(): Promise<Member[]>;
  /** The leader's name, or undefined while there is none. */
  leader(): Promise<string | undefined>;
  /** Waits for a leader other than `not` that accepts writes through HAProxy; resolves with its name. */
  waitForLeader(not: string | undefined, ms: number): Promise<string>;
  /** Waits until `name` runs as a streaming synchronous standby (rejoined after a failover). */
  waitForSyncStandby(name: string, ms: number): Promise<void>;
  /** Resolves with the instant `name`'s REST `/primary` stops answering 200 (its demotion began), polled every 100 ms. */
  primaryEnds(name: string, ms: number): Promise<number>;
  /** The postmaster's pid of `name` (from postmaster.pid), or undefined while it is not running. */
  postmasterPid(name: string): number | undefined;
  /** kill -9 of `name`'s postmaster. */
  killPostgres(name: string): number;
  /** kill -9 of `name`'s Patroni and postmaster together. */
  killNode(name: string): Promise<void>;
  /** Starts `name`'s Patroni again (after killNode): it rejoins (pg_rewind) as a replica. */
  startNode(name: string): void;
  /** `patronictl -c <config> …`: its stdout. */
  patronictl(...args: string[]): Promise<string>;
  /** The last lines of every log (a failed expectation's message). */
  logs(lines?: number): string;
  /** Stops every process by pid and removes the directory. */
  stop(): Promise<void>;
}

/** When root, PostgreSQL and Patroni run as `postgres`: its uid and gid for spawn (no runuser in between, so the pid is Patroni's). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('running as root, but there is no postgres user to run PostgreSQL as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function gone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {} // already gone
}

function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

const yaml = (v: unknown): string => JSON.stringify(v, null, 2); // YAML is a superset of JSON

export async function startTopology(): Promise<Topology> {
  const missing = missingTopologyPackages();
  if (missing.length) throw new Error(`the failover topology needs Debian's ${missing.join(', ')}`);
  const user = postgresUser();
  const dir = mkdtempSync(join(tmpdir(), 'platform-failover-'));
  chmodSync(dir, 0o755); // the postgres user reaches its directories through it
  const scope = `failover-${process.pid}`;
  const children: ChildProcess[] = [];
  const logs: string[] = [];

  /** Starts a child with its output appended to `<dir>/<name>.log`. */
  const start = (name: string, command: string, args: string[], opts: { asPostgres?: boolean; env?: NodeJS.ProcessEnv } = {}) => {
    const log = join(dir, `${name}.log`);
    if (!logs.includes(log)) logs.push(log);
    const fd = openSync(log, 'a');
    const child = spawn(command, args, {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...opts.env },
      stdio: ['ignore', fd, fd],
      ...(opts.asPostgres && user ? user : {}),
    });
    closeSync(fd);
    child.on('error', () => {}); // a failed spawn shows as an exit; the waits below report it
    children.push(child);
    return child;
  };

  const ports = { etcd: await freePort(), etcdPeer: await freePort(), haproxy: await freePort() };
  const nodes: PatroniNode[] = [];
  for (const name of ['n1', 'n2']) {
    const home = join(dir, name);
    mkdirSync(home, { mode: 0o700 });
    if (user) chownSync(home, user.uid, user.gid);
    const node: PatroniNode = {
      name,
      pgPort: await freePort(),
      restPort: await freePort(),
      dataDir: join(home, 'data'),
      config: join(dir, `${name}.yml`),
      patroni: undefined,
    };
    writeFileSync(
      node.config,
      yaml({
        scope,
        namespace: '/platform-test/',
        name,
        log: { level: 'INFO' },
        restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
        etcd3: { hosts: [`127.0.0.1:${ports.etcd}`] },
        bootstrap: {
          dcs: DCS,
          initdb: [{ encoding: 'UTF8' }, { locale: 'C' }, { 'auth-local': 'trust' }, { 'auth-host': 'trust' }],
          pg_hba: [
            'local all all trust',
            'local replication all trust',
            'host all all 127.0.0.1/32 trust',
            'host replication all 127.0.0.1/32 trust',
          ],
        },
        postgresql: {
          listen: `127.0.0.1:${node.pgPort}`,
          connect_address: `127.0.0.1:${node.pgPort}`,
          data_dir: node.dataDir,
          bin_dir: PG_BIN,
          pgpass: join(home, 'pgpass'),
          authentication: { superuser: { username: 'postgres' }, replication: { username: 'postgres' }, rewind: { username: 'postgres' } },
          parameters: { unix_socket_directories: home },
        },
      }),
    );
    nodes.push(node);
  }
  const node = (name: string) => {
    const n = nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node ${name}`);
    return n;
  };

  const startPatroni = (n: PatroniNode) => {
    n.patroni = start(n.name, BINARIES.patroni, [n.config], { asPostgres: true, env: { HOME: join(dir, n.name) } });
  };

  const postmasterPid = (name: string): number | undefined => {
    const file = join(node(name).dataDir, 'postmaster.pid');
    try {
      const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
      return pid > 0 && alive(pid) ? pid : undefined;
    } catch {
      return undefined;
    }
  };

  const members = async (): Promise<Member[]> => {
    for (const n of nodes) {
      const res = await fetch(`http://127.0.0.1:${n.restPort}/cluster`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
      if (res?.ok) return ((await res.json()) as { members: Member[] }).members;
    }
    throw new Error('no Patroni REST API answers');
  };
  const leader = async () => (await members().catch(() => [] as Member[])).find((m) => m.role === 'leader' && m.state === 'running')?.name;

  /** A write through HAProxy: the proof that the product's one host reaches a primary. */
  const writable = async (): Promise<boolean> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000, query_timeout: 2000 });
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query('select pg_is_in_recovery() as standby');
      return rows[0]?.standby === false;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  };

  const logsTail = (lines = 30) => logs.map((f) => `--- ${f}\n${tail(f, lines)}`).join('\n');
  const url = `postgres://postgres@127.0.0.1:${ports.haproxy}/postgres`;

  const stop = async () => {
    // Patroni first (SIGKILL: it must not stop, restart or promote anything while the rest goes), then each
    // PostgreSQL by its postmaster's pid (SIGQUIT: immediate shutdown, which ends its backends), then the rest.
    const patronis = nodes.flatMap((n) => (n.patroni ? [n.patroni] : []));
    for (const c of patronis) kill(c.pid!, 'SIGKILL');
    await Promise.all(patronis.map((c) => gone(c.pid!, 10_000)));
    for (const n of nodes) {
      const pid = postmasterPid(n.name);
      if (!pid) continue;
      kill(pid, 'SIGQUIT');
      if (!(await gone(pid, 10_000))) kill(pid, 'SIGKILL');
    }
    for (const c of children) if (c.exitCode === null && c.signalCode === null) kill(c.pid!, 'SIGKILL');
    await Promise.all(children.map((c) => gone(c.pid!, 10_000)));
    // TOPOLOGY_KEEP=1 keeps the directory (its logs) for a look after a run.
    if (process.env.TOPOLOGY_KEEP === '1') console.log(`topology kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  };

  const topology: Topology = {
    url,
    dir,
    nodes,
    node,
    members,
    leader,
    async waitForLeader(not, ms) {
      return until(
        `a leader other than ${not ?? 'none'} that takes writes through HAProxy`,
        ms,
        async () => {
          const name = await leader();
          return name && name !== not && (await writable()) ? name : undefined;
        },
        () => logsTail(),
      );
    },
    async waitForSyncStandby(name, ms) {
      await until(
        `${name} streaming as the synchronous standby`,
        ms,
        async () =>
          (await members().catch(() => [])).some(
            (m) => m.name === name && m.role === 'sync_standby' && ['running', 'streaming'].includes(m.state),
          ) || undefined,
        () => logsTail(),
      );
    },
    async primaryEnds(name, ms) {
      const { restPort } = node(name);
      const deadline = Date.now() + ms;
      for (;;) {
        const res = await fetch(`http://127.0.0.1:${restPort}/primary`, { signal: AbortSignal.timeout(1000) }).catch(() => undefined);
        if (res?.status !== 200) return Date.now();
        if (Date.now() > deadline) throw new Error(`${name} still primary after ${ms} ms`);
        await sleep(100);
      }
    },
    postmasterPid,
    killPostgres(name) {
      const pid = postmasterPid(name);
      if (!pid) throw new Error(`${name} runs no PostgreSQL`);
      process.kill(pid, 'SIGKILL');
      return pid;
    },
    async killNode(name) {
      const n = node(name);
      const pid = postmasterPid(name);
      if (!n.patroni || !pid) throw new Error(`${name} runs no Patroni or no PostgreSQL`);
      const patroni = n.patroni;
      n.patroni = undefined;
      kill(patroni.pid!, 'SIGKILL');
      kill(pid, 'SIGKILL');
      await gone(patroni.pid!, 10_000);
    },
    startNode(name) {
      startPatroni(node(name));
    },
    async patronictl(...args) {
      return (await execFileAsync(BINARIES.patronictl, ['-c', nodes[0]!.config, ...args], { timeout: 60_000 })).stdout;
    },
    logs: logsTail,
    stop,
  };

  try {
    // etcd: one member, on loopback, its data in the directory.
    start('etcd', BINARIES['etcd-server'], [
      '--name=e1',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${ports.etcd}`,
      `--advertise-client-urls=http://127.0.0.1:${ports.etcd}`,
      `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
      `--initial-cluster=e1=http://127.0.0.1:${ports.etcdPeer}`,
      '--initial-cluster-state=new',
      `--initial-cluster-token=${scope}`,
    ]);
    await until(
      'etcd',
      30_000,
      async () =>
        (await fetch(`http://127.0.0.1:${ports.etcd}/health`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined))?.ok ||
        undefined,
      () => logsTail(),
    );
    // The first node bootstraps the cluster (initdb) before the second starts, which then clones it: no race for it.
    startPatroni(nodes[0]!);
    await until(
      'n1 to bootstrap as the leader',
      90_000,
      async () => (await leader()) === 'n1' || undefined,
      () => logsTail(),
    );
    startPatroni(nodes[1]!);

    const haproxyConfig = join(dir, 'haproxy.cfg');
    writeFileSync(
      haproxyConfig,
      [
        'global',
        '  maxconn 1000',
        'defaults',
        '  mode tcp',
        '  timeout connect 2s',
        // Idle connections (LISTEN, a pool's idle clients) live long; a dead node's sessions are cut by the check.
        '  timeout client 1h',
        '  timeout server 1h',
        '  timeout check 1s',
        'listen primary',
        `  bind 127.0.0.1:${ports.haproxy}`,
        // OPTIONS: Patroni answers the role's status without a body, which HAProxy would cut (and Patroni log) mid-write.
        '  option httpchk OPTIONS /primary',
        '  http-check expect status 200',
        '  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions',
        ...nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} check port ${n.restPort}`),
        '',
      ].join('\n'),
    );
    start('haproxy', BINARIES.haproxy, ['-db', '-f', haproxyConfig]);
    await topology.waitForLeader(undefined, 60_000);
    await topology.waitForSyncStandby('n2', 90_000);
    return topology;
  } catch (e) {
    const message = (e as Error).message.includes('--- ') ? (e as Error).message : `${(e as Error).message}\n${logsTail(40)}`;
    await stop();
    throw new Error(message);
  }
}

// By hand: start it, print how to reach it, stop everything on Ctrl-C.
if (import.meta.url === `file://${process.argv[1]}`) {
  const t = await startTopology();
  console.log(`DATABASE_URL=${t.url}`);
  console.log(`patronictl -c ${t.nodes[0]!.config} list`);
  console.log(`logs: ${t.dir}/*.log; Ctrl-C stops everything`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      void t.stop().then(() => process.exit(0));
    });
  await new Promise(() => {});
}
