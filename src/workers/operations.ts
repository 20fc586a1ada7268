import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Deps } from '../domain/context.ts';
import { DEFAULT_OPERATIONS_CONCURRENCY } from '../config.ts';
import { claimOperation, runClaimed, type OperationHandler } from '../domain/operation/engine.ts';

/**
 * The operations worker of one process: claims due operations and runs up to
 * OPERATIONS_CONCURRENCY of them at once (src/domain/operation/engine.ts).
 * Running several matters most after a crash: every operation a dead process
 * held becomes due when its lease expires, and run one at a time they would
 * settle one provider call after another instead of all about a lease later.
 * Claims stay one at a time (each is one short transaction); leases and
 * fenced commits keep concurrent runs, here or in other processes, apart.
 * It ticks every OPERATIONS_POLL_MS, which is also the backstop that picks up
 * waiting operations whose recheck time has come and expired leases, and
 * fills up at once when kicked (an operation was enqueued or woken in this
 * process, or one of its runs ended). Tests disable the timer
 * (`operations.worker: false`) and drive it with `drain()`, one at a time.
 */
export class OperationsRunner {
  /** Lease owner prefix: unique per process start, so a restarted process never mistakes an old lease for its own. */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly handlers: ReadonlyMap<string, OperationHandler>;
  private readonly changes = new EventEmitter();
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private loop: Promise<void> = Promise.resolve();
  private kicked = false;
  private filling = false;
  private refill = false;
  private claims = 0;
  private stopped = false;

  constructor(
    private readonly deps: Deps,
    handlers: OperationHandler[],
  ) {
    this.handlers = new Map(handlers.map((h) => [h.kind, h]));
    this.changes.setMaxListeners(0);
  }

  start(): void {
    if (!this.deps.config.operations.worker) return;
    this.timer = setInterval(() => this.kick(), this.deps.config.operations.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Runs the worker soon (coalesced); a no-op when the timer is off. */
  kick(): void {
    if (!this.timer || this.stopped || this.kicked) return;
    this.kicked = true;
    setImmediate(() => {
      this.kicked = false;
      void this.fill().catch((err) => this.deps.log.error({ err }, 'operations worker failed'));
    });
  }

  /** Claims due operations while fewer than the concurrency run; each run kicks the worker when it ends. */
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
        while (!this.stopped && this.running.size < limit) {
          if (!(await this.claimAndRun())) break;
        }
      } while (this.refill && !this.stopped);
    } finally {
      this.filling = false;
    }
  }

  /** Claims one due operation and starts running it in the background; false when none was due. */
  private async claimAndRun(): Promise<boolean> {
    const owner = this.claimOwner();
    const op = await claimOperation(this.deps, owner);
    if (!op) return false;
    const run: Promise<void> = runClaimed(this.deps, this.handlers, op, owner)
      .catch((err) => this.deps.log.error({ err, operation: op.id }, 'operation run failed'))
      .finally(() => {
        this.running.delete(run);
        this.kick();
      });
    this.running.add(run);
    return true;
  }

  /** One lease owner per claim: two runs in this process never pass each other's lease fence. */
  private claimOwner(): string {
    return `${this.owner}#${++this.claims}`;
  }

  /** Claims and runs one due operation; false when none was due. */
  async runOnce(): Promise<boolean> {
    const owner = this.claimOwner();
    const op = await claimOperation(this.deps, owner);
    if (!op) return false;
    await runClaimed(this.deps, this.handlers, op, owner);
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
    await this.loop;
    await Promise.all(this.running);
  }
}
