/**
 * Interleaved comparisons for bench/run.ts: a baseline and its subjects run
 * in short slices, round after round (bench/stats.ts `schedule`), each slice
 * timed by wall clock and by the CPU time of this process's main thread,
 * where the API and the baselines run. HTTP load comes from a worker thread
 * (bench/load-worker.mjs), so the main thread's CPU is the server's alone.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { pairRatios, quantile, round, schedule, spread, type Spread } from './stats.ts';

/**
 * CPU time of the main thread in ms. /proc/self/task/<pid>/schedstat is in
 * nanoseconds; `stat` (clock ticks) where schedstat is missing;
 * process.cpuUsage() (the whole process, load generator included) off Linux.
 */
export function mainThreadCpuMs(pid = process.pid): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    try {
      const f = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
    } catch {
      if (pid !== process.pid) return NaN;
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    }
  }
}

/** CPU time (utime + stime, every thread) of process `pid` in ms, from /proc/<pid>/stat (Linux USER_HZ = 100). */
export function processCpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

export interface Slice {
  /** Completed requests (or rows, or operations). */
  count: number;
  errors: number;
  seconds: number;
  p50?: number;
  p99?: number;
}

/** One side of a comparison: runs for about `seconds` and says how much it completed. */
export interface Side {
  name: string;
  run(seconds: number): Promise<Slice>;
  /** The CPU clock (ms) of the thread serving this side, when it is not this process's main thread (a server in a process of its own). */
  cpuMs?(): number;
}

export interface LoadRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Every occurrence of `[<uuid>]` in `body` is replaced by a fresh UUID per request. */
  uniqueBody?: boolean;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  /** 2xx responses. */
  ok: number;
  non2xx: number;
  errors: number;
  seconds: number;
  p50: number;
  p99: number;
}

let worker: Worker | undefined;
/** One HTTP load run in the load-generator thread. */
export function httpLoad(o: LoadRequest): Promise<LoadResult> {
  worker ??= new Worker(new URL('./load-worker.mjs', import.meta.url));
  const w = worker;
  return new Promise((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    w.once('error', onError);
    w.once('message', (r: LoadResult) => (w.off('error', onError), resolve(r)));
    w.postMessage(o);
  });
}
export async function stopLoadWorker() {
  await worker?.terminate();
  worker = undefined;
}

export interface LaunchRequest {
  origin: string;
  /** A platform token with events:read, distributions:write and distributions:launch. */
  secret: string;
  concurrency: number;
  warmupSeconds: number;
  seconds: number;
}

export interface LaunchResult {
  /** Launch (POST sent) to its terminal event's arrival on the SSE subscription, ms, per completed operation. */
  latencies: number[];
  /** Launch to its 202, ms. */
  accepted: number[];
  /** The operation's status in its 202 (`running`: run at its commit; `pending`: no free slot, claimed later). */
  statuses: string[];
  failed: number;
  seconds: number;
  /** Main-thread (server) CPU ms over the measured window. */
  serverCpuMs: number;
}

/**
 * Operation launches from their own worker thread (bench/launch-worker.mjs): `concurrency` closed-loop launchers
 * whose operations end on the worker's own SSE subscription; after a warm-up, the measured window's figures and the
 * server thread's CPU over that window.
 */
export async function launchLoad(o: LaunchRequest): Promise<LaunchResult> {
  const w = new Worker(new URL('./launch-worker.mjs', import.meta.url));
  try {
    return await new Promise((resolve, reject) => {
      let cpu0 = 0;
      w.once('error', reject);
      w.on('message', (m: { phase: 'measuring' } | ({ phase: 'done' } & Omit<LaunchResult, 'serverCpuMs'>)) => {
        if (m.phase === 'measuring') cpu0 = mainThreadCpuMs();
        else {
          const { phase: _, ...r } = m;
          resolve({ ...r, serverCpuMs: mainThreadCpuMs() - cpu0 });
        }
      });
      w.postMessage(o);
    });
  } finally {
    await w.terminate();
  }
}

/** A side that is HTTP load from the worker thread; `cpuMs` when the server is not this process's main thread. */
export function httpSide(name: string, o: Omit<LoadRequest, 'seconds'>, cpuMs?: () => number): Side {
  return {
    name,
    cpuMs,
    run: async (seconds) => {
      const r = await httpLoad({ ...o, seconds });
      return { count: r.ok, errors: r.non2xx + r.errors, seconds: r.seconds, p50: r.p50, p99: r.p99 };
    },
  };
}

export interface SideStats {
  name: string;
  /** Per-slice throughput, in round order. */
  rates: number[];
  rate: Spread;
  /** Per-slice main-thread CPU ms per completed request. */
  cpuMs: number[];
  cpu: Spread;
  errors: number;
  p50?: number;
  p99?: number;
}

export interface Comparison {
  baseline: SideStats;
  subjects: { side: SideStats; ratio: Spread; ratios: number[]; cpuRatio: Spread }[];
  loadavg: [number, number];
  rounds: number;
  sliceSeconds: number;
}

/**
 * Runs `baseline` and `subjects` interleaved: a warm-up slice each, then
 * `rounds` rounds of one slice per side in rotating order. A subject's ratio
 * is the median of its per-round throughput ratios to the baseline; its CPU
 * ratio the median of baseline CPU per request / its own (above 1 = cheaper
 * than the baseline), both with their spread.
 */
export async function compare(
  baseline: Side,
  subjects: Side[],
  o: { rounds: number; seconds: number; warmup?: number },
): Promise<Comparison> {
  const sides = [baseline, ...subjects];
  const loadStart = os.loadavg()[0]!;
  for (const s of sides) await s.run(o.warmup ?? 1);
  const slices: { rate: number; cpuMs: number; errors: number; p50?: number; p99?: number }[][] = sides.map(() => []);
  for (const order of schedule(sides.length, o.rounds)) {
    for (const i of order) {
      const clock = sides[i]!.cpuMs ?? mainThreadCpuMs;
      const cpu0 = clock();
      const r = await sides[i]!.run(o.seconds);
      const cpu = clock() - cpu0;
      slices[i]!.push({ rate: r.count / r.seconds, cpuMs: r.count ? cpu / r.count : NaN, errors: r.errors, p50: r.p50, p99: r.p99 });
    }
  }
  const stats = sides.map((s, i): SideStats => {
    const xs = slices[i]!;
    const p50s = xs.map((x) => x.p50).filter((x): x is number => x !== undefined);
    const p99s = xs.map((x) => x.p99).filter((x): x is number => x !== undefined);
    return {
      name: s.name,
      rates: xs.map((x) => round(x.rate, 1)),
      rate: spread(xs.map((x) => x.rate)),
      cpuMs: xs.map((x) => round(x.cpuMs, 3)),
      cpu: spread(xs.map((x) => x.cpuMs)),
      errors: xs.reduce((a, x) => a + x.errors, 0),
      p50: p50s.length ? spread(p50s).median : undefined,
      p99: p99s.length ? spread(p99s).median : undefined,
    };
  });
  // Rates count answered requests only: a side whose requests were refused (a budget, a share) would look slow.
  for (const s of stats)
    if (s.errors) console.warn(`bench: ${s.name} had ${s.errors} refused or failed requests; its rate is not the stack's`);
  const base = stats[0]!;
  return {
    baseline: base,
    subjects: stats.slice(1).map((side) => {
      const ratios = pairRatios(side.rates, base.rates);
      return { side, ratios: ratios.map((x) => round(x, 3)), ratio: spread(ratios), cpuRatio: spread(pairRatios(base.cpuMs, side.cpuMs)) };
    }),
    loadavg: [round(loadStart), round(os.loadavg()[0]!)],
    rounds: o.rounds,
    sliceSeconds: o.seconds,
  };
}

/** `concurrency` closed-loop callers of `fn` on this thread for `seconds`. */
export async function closedLoop(concurrency: number, seconds: number, fn: () => Promise<unknown>): Promise<Slice> {
  const lat: number[] = [];
  let errors = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        try {
          await fn();
          lat.push(performance.now() - t0);
        } catch {
          errors++;
        }
      }
    }),
  );
  return {
    count: lat.length,
    errors,
    seconds: (performance.now() - started) / 1000,
    p50: round(quantile(lat, 0.5)),
    p99: round(quantile(lat, 0.99)),
  };
}
