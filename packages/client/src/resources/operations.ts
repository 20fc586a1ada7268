import { PlatformError } from '../error.ts';
import type { PagePromise } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';
import { sleep } from '../retry.ts';
import { Resource, path } from './resource.ts';
import { TERMINAL_OPERATION_STATUSES, type Operation, type OperationStatus } from './types.ts';

export interface OperationListParams {
  subjectType?: string;
  /** A prefixed id or a bare uuid. */
  subjectId?: string;
  status?: OperationStatus;
  /** Only the fan-out children of this `op_` operation. */
  parentOperationId?: string;
  /** Only the cancels targeting this `op_` operation. */
  targetOperationId?: string;
  limit?: number;
  startingAfter?: string;
}

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

export class Operations extends Resource {
  list(params: OperationListParams = {}, options?: RequestOptions): PagePromise<Operation> {
    return this.page('/operations', { ...params }, options);
  }

  retrieve(id: string, options?: RequestOptions): Promise<Operation> {
    return this.one({ method: 'GET', path: path('/operations/{id}', id), options }, 'operation');
  }

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
