import { PlatformError } from '../error.ts';
import * as generated from '../generated/resources.ts';
import type { Operation, OperationStatus } from '../generated/types.ts';
import { sleep } from '../retry.ts';

/** The statuses an operation never leaves (test/package/client-package.test.ts holds them equal to the server's). */
export const TERMINAL_OPERATION_STATUSES: readonly OperationStatus[] = ['succeeded', 'partial', 'failed', 'canceled'];

export interface WaitOptions {
  /** Give up after this long (default 60 000 ms); the operation keeps running. */
  timeoutMs?: number;
  /** Poll interval (default 1000 ms). */
  intervalMs?: number;
  /** Called with every polled state, e.g. to draw progress. */
  onPoll?: (operation: Operation) => void;
}

export function isTerminal(status: string): boolean {
  return (TERMINAL_OPERATION_STATUSES as readonly string[]).includes(status);
}

export class Operations extends generated.Operations {
  /**
   * Polls until the operation is terminal and resolves with it, whatever the
   * outcome: `failed` and `canceled` are results, not exceptions. Only running
   * out of time throws (code `operation_wait_timeout`), and that leaves the
   * operation running on the server.
   */
  async wait(id: string, opts: WaitOptions = {}): Promise<Operation> {
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const intervalMs = opts.intervalMs ?? 1000;
    const deadline = Date.now() + timeoutMs;
    let last: Operation | undefined;
    for (;;) {
      const remaining = deadline - Date.now();
      // A poll never outlives the deadline; one cut short by it just ends the wait.
      const op = await this.retrieve(id, { timeoutMs: Math.max(1, Math.min(remaining, 30_000)) }).catch((e: unknown) => {
        if (e instanceof PlatformError && e.code === 'timeout' && Date.now() >= deadline) return undefined;
        throw e;
      });
      if (op) {
        last = op;
        opts.onPoll?.(op);
        if (isTerminal(op.status)) return op;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        const state = last ? `${last.status}${last.waitingReason ? ` (${last.waitingReason})` : ''}` : 'not yet seen';
        throw new PlatformError({
          code: 'operation_wait_timeout',
          message: `Operation ${id} is still ${state} after ${timeoutMs} ms; it keeps running: wait again or poll operations.retrieve`,
        });
      }
      await sleep(Math.min(intervalMs, left));
    }
  }
}
