/**
 * One server process against N on one port (PLATFORM_API_PROCESSES, docs/operating/processes.md): a script, not a
 * test. Two servers on their own databases in one PostgreSQL, each loaded in turn in interleaved slices
 * (bench/measure.ts `compare`) with the same request: a page of the Surface B feed (token and organization buckets
 * charged, in the cluster through its primary). CPU is every process of a server (its primary included) from
 * /proc/<pid>/stat, per request; PostgreSQL's and the load generator's CPU are not counted but share the cores.
 *
 *   BENCH_ADMIN_URL=postgres://postgres@127.0.0.1:55432/postgres BENCH_PROCESSES=2 npx tsx bench/processes.ts
 */
import { availableParallelism, loadavg } from 'node:os';
import { adminQuery } from '../test/support/global-setup.ts';
import { spawnServer, type ServerProcess } from '../test/support/ops-process.ts';
import { compare, httpSide, processCpuMs, stopLoadWorker } from './measure.ts';
import { BENCH_OPERATOR, benchEnv, benchTenant, jsonPoster } from './tenant.ts';

const ADMIN = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:55432/postgres';
const N = Number(process.env.BENCH_PROCESSES ?? availableParallelism());
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SLICE_S = Number(process.env.BENCH_SLICE_S ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

interface Server {
  name: string;
  p: ServerProcess;
  pids: number[];
  token: string;
}

async function start(processes: number): Promise<Server> {
  const db = `bench_processes_${processes}_${Date.now()}`;
  await adminQuery(ADMIN, `CREATE DATABASE ${db}`);
  const url = new URL(ADMIN);
  url.pathname = `/${db}`;
  const env = { ...benchEnv('memory://', url.toString()), PLATFORM_API_PROCESSES: String(processes) } as Record<string, string>;
  const p = await spawnServer(env, 180_000);
  const workers = /pids ([\d, ]+);/.exec(p.output())?.[1]?.split(', ').map(Number) ?? [];
  const { created, secret } = await benchTenant(p.origin, BENCH_OPERATOR, ['events:read']);
  const post = jsonPoster(p.origin);
  for (let i = 0; i < 50; i++) {
    await post(
      '/operator/events',
      { organization_id: created.organization.id, type: 'payout.created', subject: { type: 'payout', id: `po_${i}` }, data: { i } },
      BENCH_OPERATOR,
    );
  }
  return { name: processes === 1 ? 'one process' : `${processes} processes`, p, pids: [p.child.pid!, ...workers], token: secret };
}

const servers = [await start(1), await start(N)];
const side = (s: Server) =>
  httpSide(
    s.name,
    { url: `${s.p.origin}/v1/platform/events?limit=20`, headers: { authorization: `Bearer ${s.token}` }, connections: CONNECTIONS },
    () => s.pids.reduce((a, pid) => a + processCpuMs(pid), 0),
  );
try {
  const cluster = servers[1]!;
  const all = () => cluster.pids.reduce((a, pid) => a + processCpuMs(pid), 0);
  const primaryCpu0 = processCpuMs(cluster.pids[0]!);
  const clusterCpu0 = all();
  const result = await compare(side(servers[0]!), [side(servers[1]!)], { rounds: ROUNDS, seconds: SLICE_S });
  const primaryCpu = processCpuMs(cluster.pids[0]!) - primaryCpu0;
  const clusterCpu = all() - clusterCpu0;
  const { baseline, subjects } = result;
  const subject = subjects[0]!;
  const fmt = (x: number, d = 3) => x.toFixed(d);
  console.log(
    `cores ${availableParallelism()}; loadavg ${result.loadavg.join(' → ')}; ${ROUNDS} rounds of ${SLICE_S} s; ${CONNECTIONS} connections`,
  );
  for (const s of [baseline, subject.side]) {
    console.log(
      `${s.name.padEnd(12)} ${fmt(s.rate.median, 0)} req/s  CPU ${fmt(s.cpu.median)} ms/request (all its processes)  p99 ${s.p99} ms`,
    );
  }
  console.log(
    `${N} processes / one: throughput ×${fmt(subject.ratio.median, 2)} [${fmt(subject.ratio.min, 2)}–${fmt(subject.ratio.max, 2)}], CPU per request ×${fmt(1 / subject.cpuRatio.median, 2)}; the primary (connections handed out, buckets) ${fmt((100 * primaryCpu) / clusterCpu, 0)} % of the cluster's CPU`,
  );
} finally {
  await stopLoadWorker();
  await Promise.all(servers.map((s) => s.p.stop('SIGTERM', 20_000)));
  console.log(`loadavg at end ${loadavg()[0]!.toFixed(1)}`);
}
