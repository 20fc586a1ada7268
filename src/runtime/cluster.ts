import cluster, { type Worker } from 'node:cluster';
import pg from 'pg';
import type { Logger } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Config } from '../config.ts';
import { DomainError, isDomainError } from '../domain/errors.ts';
import { type BucketLedger, type BucketSpec, keepBucketsIn, type RateLimitState, TokenBuckets } from '../domain/platform/rate-limit.ts';

/**
 * Every core of one machine (PLATFORM_API_PROCESSES, docs/operating/processes.md): a primary process forks N copies
 * of the server on one port with Node's cluster module and supervises them; it serves no request itself. What the
 * copies must agree on and the database does not hold lives here, in the primary: the rate-limit buckets (a machine
 * admits what one process would) and the metrics (a scrape of any copy answers for all). Everything else is already
 * shared through PostgreSQL, as between machines (ADR 0006): sessions, streams' cursors, leases, NOTIFY wake-ups.
 */

/**
 * PostgreSQL connections one process may hold on PostgreSQL itself: its pool (unless a transaction pooler stands in
 * front of it, which bounds its own server connections), one per LISTEN connection its role opens, one for
 * migrations at start.
 */
export function connectionsPerProcess(config: Pick<Config, 'poolSize' | 'role' | 'operations' | 'databasePoolMode'>): number {
  const serves = config.role !== 'worker';
  const background = config.role !== 'api';
  const listeners = 1 /* events */ + (serves ? 1 : 0) /* credentials */ + (background && config.operations.worker ? 1 : 0); /* operations */
  return (config.databasePoolMode === 'transaction' ? 0 : config.poolSize) + listeners + 1;
}

/** DATABASE_CONNECTION_BUDGET, or what PostgreSQL admits beyond its reserved connections. */
async function connectionBudget(
  config: Pick<Config, 'connectionBudget' | 'databaseUrl' | 'databaseDirectUrl'>,
): Promise<{ budget: number; from: string }> {
  if (config.connectionBudget !== undefined) return { budget: config.connectionBudget, from: 'DATABASE_CONNECTION_BUDGET' };
  const client = new pg.Client({ connectionString: config.databaseDirectUrl ?? config.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ budget: number }>(
      `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int AS budget`,
    );
    return { budget: rows[0]!.budget, from: "PostgreSQL's max_connections less superuser_reserved_connections" };
  } finally {
    await client.end().catch(() => {});
  }
}

/** Refuses (an `Invalid configuration` line) a process count whose connections exceed the budget. */
export async function checkConnectionBudget(config: Config): Promise<void> {
  const each = connectionsPerProcess(config);
  const { budget, from } = await connectionBudget(config);
  if (config.processes * each > budget) {
    throw new Error(
      `Invalid configuration:\n  PLATFORM_API_PROCESSES: ${config.processes} processes × ${each} PostgreSQL connections (${config.databasePoolMode === 'transaction' ? 'the pool is behind the pooler; ' : `DATABASE_POOL_SIZE ${config.poolSize} + `}listeners and migrations) = ${config.processes * each}, over the budget of ${budget} (${from}); lower PLATFORM_API_PROCESSES or DATABASE_POOL_SIZE, or raise the budget`,
    );
  }
}

// Messages between the primary and its processes (Node's IPC channel, JSON).
type Call =
  | { id: number; op: 'takeAll'; cost: number; claims: { set: BucketSpec; key: string }[] }
  | { id: number; op: 'wait' | 'spend' | 'giveBack'; set: BucketSpec; key: string; cost: number };
/** A takeAll's answer: the admission's state, and per claim the tokens lent with what the bucket keeps. */
type Taken = { state: RateLimitState; leases: { tokens: number; left: number }[] };
/** Most a lease lends: this fraction of a bucket's burst (and never more than 1/(2N) of what it holds). */
const LEASE_OF_BURST = 1 / 20;
/** A lease not used for this long goes back to the primary. */
const LEASE_IDLE_MS = 1000;
type Result = { id: number; value?: unknown; error?: { code: string; message: string; details: Record<string, unknown> } };
type Message =
  | { t: 'platform:buckets'; calls: Call[] }
  | { t: 'platform:buckets'; results: Result[] }
  | { t: 'platform:charged'; name: string }
  | { t: 'platform:ready'; banner?: string }
  | { t: 'platform:metrics'; id: number; text?: string; error?: string };

/** The buckets of every process, kept by the primary (a call runs the same arithmetic a lone process runs). */
class Ledger {
  private readonly sets = new Map<string, TokenBuckets>();
  private readonly charged = new Set<string>();

  constructor(
    private readonly processes: number,
    private readonly broadcast: (m: Message) => void,
  ) {}

  run(call: Call): Result {
    try {
      if (call.op === 'takeAll') {
        const claims = call.claims.map((c) => [this.set(c.set), c.key] as const);
        const state = TokenBuckets.takeAllHere(call.cost, claims);
        for (const c of call.claims) this.mark(c.set.name);
        // Admitted: each process may spend a small share of what is left without asking (LedgerClient).
        const leases = claims.map(([set, key]) => set.leaseHere(key, Math.floor(set.spec.burst * LEASE_OF_BURST), 2 * this.processes));
        return { id: call.id, value: { state, leases } satisfies Taken };
      }
      if (call.op === 'giveBack') return { id: call.id, value: this.set(call.set).giveBackHere(call.key, call.cost) };
      if (call.op === 'wait') return { id: call.id, value: this.set(call.set).waitHere(call.key, call.cost) };
      const value = this.set(call.set).spendHere(call.key, call.cost);
      this.mark(call.set.name);
      return { id: call.id, value };
    } catch (e) {
      if (!isDomainError(e)) throw e;
      return { id: call.id, error: { code: e.code, message: e.message, details: e.details } };
    }
  }

  private set(spec: BucketSpec): TokenBuckets {
    let set = this.sets.get(spec.name);
    if (!set) this.sets.set(spec.name, (set = TokenBuckets.of(spec, Date.now)));
    return set;
  }

  /** A set charged for the first time: every process learns that its buckets are no longer all full (`empty`). */
  private mark(name: string): void {
    if (this.charged.has(name)) return;
    this.charged.add(name);
    this.broadcast({ t: 'platform:charged', name });
  }
}

/**
 * A process's side of the ledger: calls of one turn of the event loop go to the primary in one message. Should the
 * primary be gone (the process is then draining), the process keeps its own buckets for what is left.
 */
class LedgerClient implements BucketLedger {
  private calls: Call[] = [];
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  private next = 0;
  private readonly chargedSets = new Set<string>();
  private readonly own = new Map<string, TokenBuckets>();
  private readonly leases = new Map<string, { set: BucketSpec; key: string; tokens: number; left: number; used: number }>();

  constructor() {
    setInterval(() => this.giveBack(), LEASE_IDLE_MS).unref();
    process.on('message', (m: Message) => {
      if (m.t === 'platform:charged') this.chargedSets.add(m.name);
      else if (m.t === 'platform:buckets' && 'results' in m) {
        for (const r of m.results) {
          const w = this.waiting.get(r.id);
          this.waiting.delete(r.id);
          if (r.error) w?.reject(new DomainError(r.error.code as never, r.error.message, null, r.error.details));
          else w?.resolve(r.value);
        }
      }
    });
    process.on('disconnect', () => {
      for (const w of this.waiting.values())
        w.reject(new DomainError('service_unavailable', 'The server is restarting; retry', null, { retry_after: 1 }));
      this.waiting.clear();
    });
  }

  /**
   * Spends from the leases this process holds when each claim's covers the cost (no message); otherwise the primary
   * decides, and lends a share of what is left with its admission. A lease is tokens the primary's bucket no longer
   * holds, so the machine never admits more than one process would; what a lease leaves unspent goes back after
   * LEASE_IDLE_MS.
   */
  takeAll(cost: number, claims: { set: BucketSpec; key: string }[]): Promise<RateLimitState> {
    if (!process.connected)
      return Promise.resolve(
        TokenBuckets.takeAllHere(
          cost,
          claims.map((c) => [this.ownSet(c.set), c.key]),
        ),
      );
    const keys = claims.map((c) => `${c.set.name}\u0000${c.key}`);
    const held = keys.map((k) => this.leases.get(k));
    if (held.every((h) => h !== undefined && h.tokens >= cost)) {
      let tightest: RateLimitState | undefined;
      held.forEach((h, i) => {
        h!.tokens -= cost;
        h!.used = Date.now();
        const { burst, perSecond } = claims[i]!.set;
        const remaining = Math.floor(h!.left + h!.tokens);
        if (!tightest || remaining < tightest.remaining)
          tightest = { limit: burst, remaining, resetSeconds: Math.ceil((burst - remaining) / perSecond) };
      });
      return Promise.resolve(tightest!);
    }
    return (this.call({ op: 'takeAll', cost, claims }) as Promise<Taken>).then(({ state, leases }) => {
      leases.forEach(({ tokens, left }, i) => {
        const lease = this.leases.get(keys[i]!) ?? { set: claims[i]!.set, key: claims[i]!.key, tokens: 0, left, used: 0 };
        lease.tokens += tokens;
        lease.left = left;
        lease.used = Date.now();
        if (lease.tokens > 0) this.leases.set(keys[i]!, lease);
      });
      return state;
    });
  }

  /** Hands back what leases left unspent for LEASE_IDLE_MS. */
  private giveBack(): void {
    const idle = Date.now() - LEASE_IDLE_MS;
    for (const [k, lease] of this.leases) {
      if (lease.used > idle) continue;
      this.leases.delete(k);
      if (lease.tokens > 0 && process.connected)
        void this.call({ op: 'giveBack', set: lease.set, key: lease.key, cost: lease.tokens }).catch(() => {});
    }
  }

  wait(set: BucketSpec, key: string, cost: number): Promise<number> {
    if (!process.connected) return Promise.resolve(this.ownSet(set).waitHere(key, cost));
    return this.call({ op: 'wait', set, key, cost }) as Promise<number>;
  }

  spend(set: BucketSpec, key: string, cost: number): Promise<boolean> {
    if (!process.connected) return Promise.resolve(this.ownSet(set).spendHere(key, cost));
    return this.call({ op: 'spend', set, key, cost }) as Promise<boolean>;
  }

  charged(set: BucketSpec): boolean {
    return this.chargedSets.has(set.name);
  }

  private call(call: Call extends infer C ? (C extends Call ? Omit<C, 'id'> : never) : never): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const id = this.next++;
      this.waiting.set(id, { resolve, reject });
      if (this.calls.push({ ...call, id } as Call) === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const calls = this.calls;
    this.calls = [];
    if (process.connected) process.send!({ t: 'platform:buckets', calls } satisfies Message);
    else
      for (const c of calls)
        this.waiting.get(c.id)?.reject(new DomainError('service_unavailable', 'The server is restarting; retry', null, { retry_after: 1 }));
  }

  /** This process's own set, once the primary is gone; using it charges it (what `charged` answers for it). */
  private ownSet(spec: BucketSpec): TokenBuckets {
    this.chargedSets.add(spec.name);
    let set = this.own.get(spec.name);
    if (!set) this.own.set(spec.name, (set = TokenBuckets.of(spec, Date.now)));
    return set;
  }
}

/** Index of this process among the primary's (1..N), or undefined outside a cluster. */
export function processIndex(): number | undefined {
  return cluster.isWorker ? Number(process.env.PLATFORM_PROCESS_INDEX) : undefined;
}

/**
 * Joins the primary from a forked process: buckets kept there, metrics answered for every process. `ready` tells the
 * primary this process listens (the first one passes the banner, which the primary prints once all listen).
 */
export function joinCluster(registry: Registry): { ready(banner: string): void; scrape(): Promise<string> } {
  keepBucketsIn(new LedgerClient());
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // installs prom-client's answer to the primary's requests for this process's metrics
  let next = 0;
  const scrapes = new Map<number, { resolve(t: string): void; reject(e: Error): void }>();
  process.on('message', (m: Message) => {
    if (m.t !== 'platform:metrics') return;
    const s = scrapes.get(m.id);
    scrapes.delete(m.id);
    if (m.text !== undefined) s?.resolve(m.text);
    else s?.reject(new Error(m.error ?? 'metrics unavailable'));
  });
  return {
    ready: (banner) => process.send?.({ t: 'platform:ready', banner: processIndex() === 1 ? banner : undefined } satisfies Message),
    scrape: () =>
      new Promise((resolve, reject) => {
        if (!process.connected) return reject(new Error('the primary process is gone'));
        const id = next++;
        scrapes.set(id, { resolve, reject });
        process.send!({ t: 'platform:metrics', id } satisfies Message);
      }),
  };
}

/**
 * The primary: forks the processes (the first alone, so migrations run once, then the rest), prints the banner once
 * all listen, restarts a process that dies (backing off while they keep dying), keeps the ledger and answers metrics
 * scrapes, and on SIGTERM or SIGINT stops them all (each drains as a lone server does) before it exits. Resolves
 * never; exits the process.
 */
export async function runPrimary(config: Config, log: Logger): Promise<never> {
  const workers = new Map<Worker, number>();
  const ledger = new Ledger(config.processes, (m) => {
    for (const w of workers.keys()) if (w.isConnected()) w.send(m);
  });
  const aggregator = new AggregatorRegistry();
  let stopping = false;
  let crashes = 0;

  cluster.on('message', (worker, m: Message) => {
    if (m.t === 'platform:buckets' && 'calls' in m) {
      if (worker.isConnected()) worker.send({ t: 'platform:buckets', results: m.calls.map((c) => ledger.run(c)) } satisfies Message);
    } else if (m.t === 'platform:metrics') {
      aggregator.clusterMetrics().then(
        (text) => worker.isConnected() && worker.send({ t: 'platform:metrics', id: m.id, text } satisfies Message),
        (err: Error) => worker.isConnected() && worker.send({ t: 'platform:metrics', id: m.id, error: err.message } satisfies Message),
      );
    }
  });

  /** Forks process `index`; resolves with its banner once it listens, rejects with its exit code if it dies first. */
  const fork = (index: number): Promise<string | undefined> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork({ PLATFORM_PROCESS_INDEX: String(index) });
      workers.set(worker, index);
      let listening = false;
      worker.on('message', (m: Message) => {
        if (m.t !== 'platform:ready') return;
        listening = true;
        resolve(m.banner);
      });
      worker.on('exit', (code, signal) => {
        workers.delete(worker);
        if (!listening) return reject(Object.assign(new Error(`process ${index} exited before it listened`), { exitCode: code ?? 1 }));
        if (stopping) return;
        // A process died while serving: the others go on; it is started again, later each time they keep dying.
        crashes++;
        const delay = Math.min(30_000, 1000 * 2 ** Math.min(crashes - 1, 5));
        log.error({ process: index, pid: worker.process.pid, code, signal, restartInMs: delay }, 'a server process died; restarting it');
        setTimeout(() => {
          if (!stopping)
            fork(index).then(
              () => log.info({ process: index }, 'server process restarted'),
              () => {},
            );
        }, delay).unref();
      });
    });

  const stop = async (code: number): Promise<never> => {
    stopping = true;
    const exits = [...workers.keys()].map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.isDead()) return resolve();
          w.once('exit', () => resolve());
          w.process.kill('SIGTERM');
        }),
    );
    // Each drains within the shutdown grace; one that does not is killed.
    const late = setTimeout(() => {
      for (const w of workers.keys()) w.process.kill('SIGKILL');
    }, config.shutdownGraceMs + 5_000);
    await Promise.all(exits);
    clearTimeout(late);
    process.exit(code);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      log.info({ signal, processes: workers.size }, 'draining');
      void stop(0);
    });
  }

  try {
    // The first alone: it applies the migrations the others then find done.
    const banner = await fork(1);
    await Promise.all(Array.from({ length: config.processes - 1 }, (_, i) => fork(i + 2)));
    const pids = [...workers.keys()].map((w) => w.process.pid).join(', ');
    console.log(`${banner ?? ''}\n  ${'Processes'.padEnd(12)} ${config.processes} on one port (pids ${pids}; primary ${process.pid})`);
  } catch (err) {
    // The process that failed printed why (one line, as a lone server does); the others stop.
    await stop((err as { exitCode?: number }).exitCode || 1);
  }
  return new Promise<never>(() => {});
}
