/**
 * Scenario 4's measurement as a function: one run of bench/delivery.ts (its
 * own API, worker and receiver in a child process, so delivery never
 * competes with the benchmark process) on an empty database, parsed.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export interface DeliveryRun {
  /** An empty PostgreSQL database; embedded PGlite in memory when absent. */
  databaseUrl?: string;
  endpoints: number;
  /** Burst: events appended by 8 writers as fast as they go. */
  events: number;
  /** Steady phase: events per second offered (deliveries/s offered = rate × endpoints), for `seconds`. */
  rate: number;
  seconds: number;
  timeoutMs?: number;
}

export interface DeliveryReport {
  database: string;
  endpoints: number;
  events: number;
  burst: { deliveries: number; seconds: number; deliveriesPerSecond: number };
  steady: { eventsPerSecond: number; deliveriesPerSecond: number; received: number; p50ms: number; p99ms: number; maxms: number };
  maxRssMb?: number;
}

export function runDelivery(o: DeliveryRun): Promise<DeliveryReport> {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    LOG_LEVEL: 'warn',
    DATABASE_URL: o.databaseUrl ?? '',
    DATA_DIR: 'memory://',
    BENCH_ENDPOINTS: String(o.endpoints),
    BENCH_EVENTS: String(o.events),
    BENCH_RATE: String(o.rate),
    BENCH_SECONDS: String(o.seconds),
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'delivery.ts')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const kill = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 240_000);
    child.on('exit', (code) => {
      clearTimeout(kill);
      if (code !== 0) return reject(new Error(`bench/delivery.ts exited ${code}`));
      try {
        resolve(JSON.parse(out.slice(out.indexOf('{'))) as DeliveryReport);
      } catch (e) {
        reject(e);
      }
    });
  });
}
