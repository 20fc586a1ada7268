import { AsyncLocalStorage } from 'node:async_hooks';
import { isBackground } from './lane.ts';

/**
 * The embedded database's one queue. PGlite is one connection on this thread:
 * every query and transaction runs alone, in the order this queue picks.
 *
 * Two lanes: request work goes first, background work (lane.ts) when no
 * request waits, so a tenant's delivery storm does not stretch another
 * tenant's reads. Background work is never starved: after
 * REQUESTS_PER_BACKGROUND request jobs in a row while background waits, one
 * background job runs; so it keeps at least that share of the connection.
 *
 * Each pick waits for pending I/O first (one turn of the event loop): PGlite
 * moves on promises alone, so back-to-back jobs would otherwise keep requests
 * from arriving, responses and stream frames from leaving, and a request's
 * next query from joining its lane before a background job takes the turn
 * (bench/HISTORY.md, PGlite p99).
 *
 * A query issued by the running job itself (e.g. Prisma's transaction setup
 * on the outer client) runs at once: queued, it would wait for itself.
 */
export const REQUESTS_PER_BACKGROUND = 8;

interface Job {
  run(): Promise<unknown>;
  /** The caller's async context (tracing spans, the lane), which the job runs in. */
  context: <R>(fn: () => R) => R;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

export class EmbeddedQueue {
  private readonly request: Job[] = [];
  private readonly background: Job[] = [];
  private readonly holder = new AsyncLocalStorage<{ active: boolean }>();
  private pumping = false;
  private requestsInARow = 0;
  private runningJobs = 0;

  /** Jobs waiting or running (metrics). */
  get queued(): number {
    return this.request.length + this.background.length + this.runningJobs;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.holder.getStore()?.active) return fn();
    return new Promise<T>((resolve, reject) => {
      const job = { run: fn, context: AsyncLocalStorage.snapshot(), resolve: resolve as (v: unknown) => void, reject };
      (isBackground() ? this.background : this.request).push(job);
      void this.pump();
    });
  }

  private next(): Job | undefined {
    const backgroundTurn = this.background.length > 0 && (this.request.length === 0 || this.requestsInARow >= REQUESTS_PER_BACKGROUND);
    if (backgroundTurn) {
      this.requestsInARow = 0;
      return this.background.shift();
    }
    if (this.background.length > 0) this.requestsInARow++;
    return this.request.shift();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.request.length || this.background.length) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        const job = this.next();
        if (!job) continue;
        const token = { active: true };
        this.runningJobs++;
        try {
          job.resolve(await job.context(() => this.holder.run(token, job.run)));
        } catch (e) {
          job.reject(e);
        } finally {
          token.active = false;
          this.runningJobs--;
        }
      }
    } finally {
      this.pumping = false;
    }
  }
}
