import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Deps } from '../domain/context.ts';
import { claimOperation, runClaimed, type OperationHandler } from '../domain/operation/engine.ts';

/**
 * The operations worker of one process: claims due operations one at a time
 * and runs them (src/domain/operation/engine.ts). It ticks every
 * OPERATIONS_POLL_MS, which is also the backstop that picks up waiting
 * operations whose recheck time has come, and runs at once when kicked
 * (an operation was enqueued or woken in this process). Tests disable the
 * timer (`operations.worker: false`) and drive it with `drain()`.
 */
export class OperationsRunner {
  /** Lease owner id: unique per process start, so a restarted process never mistakes an old lease for its own. */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly handlers: ReadonlyMap<string, OperationHandler>;
  private readonly changes = new EventEmitter();
  private timer: NodeJS.Timeout | undefined;
  private loop: Promise<void> = Promise.resolve();
  private kicked = false;
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
      void this.drain().catch((err) => this.deps.log.error({ err }, 'operations worker failed'));
    });
  }

  /** Claims and runs one due operation; false when none was due. */
  async runOnce(): Promise<boolean> {
    const op = await claimOperation(this.deps, this.owner);
    if (!op) return false;
    await runClaimed(this.deps, this.handlers, op, this.owner);
    return true;
  }

  /** Runs due operations until none is left (serialized with the timer's runs); resolves with how many ran. */
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
  }
}
