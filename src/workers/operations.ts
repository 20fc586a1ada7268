import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Deps, OperationSlot } from '../domain/context.ts';
import { DEFAULT_OPERATIONS_CONCURRENCY } from '../config.ts';
import type { Operation } from '../db/generated/client.ts';
import { claimOperations, runClaimed, type OperationHandler } from '../domain/operation/engine.ts';
import { OPERATIONS_CHANNEL } from '../domain/operation/store.ts';
import { PgListener } from '../runtime/listener.ts';

/**
 * The operations worker of one process: claims due operations and runs up to
 * OPERATIONS_CONCURRENCY of them at once (src/domain/operation/engine.ts).
 * Running several matters most after a crash: every operation a dead process
 * held becomes due when its lease expires, and run one at a time they would
 * settle one provider call after another instead of all about a lease later.
 *
 * It is woken by what makes an operation due, not by a clock: a kick after
 * the commit that enqueued or woke one in this process, a NOTIFY on
 * PostgreSQL from the same commit in another process (OPERATIONS_CHANNEL;
 * every reconnect of that listener looks at once), and a timer at the time a
 * retry this process scheduled comes due. Each wake-up claims, in one
 * statement, as many due operations as there are free slots; a run that
 * settles claims the next due one for its slot in its own commit (engine.ts),
 * and when a run ends otherwise it claims again only if the last claim filled
 * every slot (more may be due). Leases and fenced commits keep concurrent runs, here or in other
 * processes, apart. The OPERATIONS_POLL_MS tick is only the backstop: a lost
 * notification, a recheck time come, a dead process's expired lease. Tests
 * disable the worker (`operations.worker: false`) and drive it with
 * `drain()`, one at a time.
 */
export class OperationsRunner {
  /** Lease owner prefix: unique per process start, so a restarted process never mistakes an old lease for its own. */
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly handlers: ReadonlyMap<string, OperationHandler>;
  private readonly changes = new EventEmitter();
  private readonly running = new Set<Promise<void>>();
  private readonly listener: PgListener;
  private readonly timers = new Set<NodeJS.Timeout>();
  private timer: NodeJS.Timeout | undefined;
  private loop: Promise<void> = Promise.resolve();
  private kicked = false;
  private filling = false;
  private refill = false;
  /** The last claim filled every free slot: more may be due, so a run that ends claims again. */
  private backlog = false;
  private claims = 0;
  /** Slots handed out by `reserve` whose operation has not started yet. */
  private reserved = 0;
  private stopped = false;

  /** What the operations it runs use: the process's ports, with this runner as their operations port. */
  private readonly deps: Deps;

  constructor(deps: Omit<Deps, 'operations'>, handlers: OperationHandler[]) {
    this.deps = { ...deps, operations: this };
    this.handlers = new Map(handlers.map((h) => [h.kind, h]));
    this.changes.setMaxListeners(0);
    // Our own NOTIFY is already a local kick; a (re)connect may have missed some.
    this.listener = new PgListener(deps, OPERATIONS_CHANNEL, { notify: (from) => from !== this.id && this.kick(), up: () => this.kick() });
  }

  async start(): Promise<void> {
    if (!this.deps.config.operations.worker) return;
    this.timer = setInterval(() => this.kick(), this.deps.config.operations.pollMs);
    this.timer.unref();
    if (this.deps.db.kind === 'postgres') await this.listener.start();
    this.kick();
  }

  /** Runs the worker soon (coalesced); a no-op when the worker is off. */
  kick(): void {
    if (!this.timer || this.stopped || this.kicked) return;
    this.kicked = true;
    setImmediate(() => {
      this.kicked = false;
      void this.fill().catch((err) => this.deps.log.error({ err }, 'operations worker failed'));
    });
  }

  /** Kicks the worker at `at` (a retry this process scheduled), not at the next poll. */
  wakeAt(at: Date): void {
    if (!this.timer || this.stopped) return;
    const t = setTimeout(
      () => {
        this.timers.delete(t);
        this.kick();
      },
      Math.max(0, at.getTime() - this.deps.clock.now().getTime()),
    );
    t.unref();
    this.timers.add(t);
  }

  /** Claims due operations while slots are free, all a pass can take in one statement. */
  private async fill(): Promise<void> {
    if (this.filling) {
      this.refill = true; // a kick while claiming: look again once this pass ends
      return;
    }
    this.filling = true;
    try {
      const limit = this.deps.config.operations.concurrency ?? DEFAULT_OPERATIONS_CONCURRENCY;
      do {
        this.refill = false;
        const free = limit - this.running.size - this.reserved;
        if (this.stopped) continue;
        if (free <= 0) {
          // Woken with every slot busy: something may be due, so the next run that ends looks again.
          this.backlog = true;
          continue;
        }
        const ops = await claimOperations(this.deps, this.claimOwner(), free);
        this.backlog = ops.length === free;
        for (const op of ops) this.run(op);
      } while (this.refill && !this.stopped);
    } finally {
      this.filling = false;
    }
  }

  /** Runs a claimed operation in the background; when it ends, claims again if the last claim left some behind. */
  private run(op: Operation): void {
    const run: Promise<void> = runClaimed(this.deps, this.handlers, op)
      .catch((err) => this.deps.log.error({ err, operation: op.id }, 'operation run failed'))
      .finally(() => {
        this.running.delete(run);
        if (this.backlog) this.kick();
      });
    this.running.add(run);
  }

  /**
   * A free slot for an operation this process is enqueuing: the row is inserted already leased to it (running, attempt
   * 1) and runs right after its commit, with no claim and no wake-up in between. Given back if the transaction fails.
   * `handover`: a run whose commit ends it passes its own slot on (the launch to its first child, a child to the parent
   * it settles), so the count does not change and no free slot is needed.
   */
  reserve(handover = false): OperationSlot | undefined {
    const limit = this.deps.config.operations.concurrency ?? DEFAULT_OPERATIONS_CONCURRENCY;
    if (!this.timer || this.stopped || (!handover && this.running.size + this.reserved >= limit)) return undefined;
    this.reserved++;
    let open = true;
    const close = () => {
      if (!open) return false;
      open = false;
      this.reserved--;
      return true;
    };
    return {
      owner: this.claimOwner(),
      run: (op) => {
        if (close() && !this.stopped) this.run(op);
      },
      cancel: () => {
        if (close() && this.backlog) this.kick();
      },
    };
  }

  /** One owner per claim (each row's lease owner adds its id): two runs in this process never pass each other's lease fence. */
  private claimOwner(): string {
    return `${this.id}#${++this.claims}`;
  }

  /** Claims and runs one due operation; false when none was due. */
  async runOnce(): Promise<boolean> {
    const [op] = await claimOperations(this.deps, this.claimOwner(), 1);
    if (!op) return false;
    await runClaimed(this.deps, this.handlers, op);
    return true;
  }
  /** Runs due operations one at a time until none is left (serialized with other drains); resolves with how many ran. */
  drain(max = 1000): Promise<number> {
    const run = this.loop.then(async () => {
      let n = 0;
      while (!this.stopped && n < max && (await this.runOnce())) n++;
      return n;
    });
    this.loop = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  /** Signals that operation `id` changed (after commit); subscriptions listen. */
  changed(id: string): void {
    this.changes.emit(id);
  }

  /** Resolves on the next change of `id` in this process, or after `ms` (changes made by other processes are seen by polling). */
  nextChange(id: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.changes.off(id, done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.changes.on(id, done);
      signal?.addEventListener('abort', done);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    for (const t of this.timers) clearTimeout(t);
    await this.listener.stop();
    await this.loop;
    await Promise.all(this.running);
  }
}
