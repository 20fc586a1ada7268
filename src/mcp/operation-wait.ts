import type { CallToolResult, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { EventStream } from '../runtime/event-stream.ts';
import { z } from 'zod';
import { invoke } from '../domain/action/action.ts';
import { isTerminal, operations } from '../domain/operation/operation.ts';
import { parseInput } from '../domain/validation.ts';
import { asDomainError, errorResult, type McpCall } from './call.ts';
import type { JsonSchema, Tool } from './tools.ts';

/**
 * `wait_for_operation`: the client library's `operations.wait` as a tool. A
 * mutation that starts an operation answers with it at once; this tool waits
 * for a terminal status (default 20 s, at most 50 s a call: below the SDK
 * client's 60 s request timeout and the server's idle timeout). A terminal
 * status is a normal result whatever it is; running out of time is an error
 * result `operation_wait_timeout` with the operation as it is now (it keeps
 * running: call again). With a progress token, each change of status is a
 * progress notification. Its answer is a stream (src/mcp/http.ts), admitted
 * to the stream budget and kept alive while it waits.
 *
 * A change made in this process wakes the wait at once (the worker's
 * `nextChange`); a settle in another process does through the live event
 * stream, which the cross-process wake-ups reach (the settle appends the
 * operation's `operation.*` event in its transaction). A change that appends
 * no event (a running operation starting to wait), or a lost notification, is
 * seen by a re-read at most WAIT_BACKSTOP_MS later.
 */
export const WAIT_TOOL = 'wait_for_operation';
export const WAIT_DEFAULT_SECONDS = 20;
export const WAIT_MAX_SECONDS = 50;
/** The re-read behind the wake-ups (another process's change that appends no event, a lost notification). */
export const WAIT_BACKSTOP_MS = 5_000;

const retrieve = operations.retrieve;
const WaitInput = z.strictObject({
  id: z.string().min(1).describe('The operation (op_...) a change answered'),
  timeout_seconds: z.number().int().min(1).max(WAIT_MAX_SECONDS).default(WAIT_DEFAULT_SECONDS).describe('How long this call waits'),
});

const schemaOf = (type: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(type, { io, target: 'draft-2020-12' }) as JsonSchema & { type: 'object' };

export const waitTool: Omit<Tool, 'action' | 'mutation'> & { scope: string } = {
  name: WAIT_TOOL,
  scope: retrieve.scope,
  description: `Wait until an operation reaches a terminal status (succeeded, partial, failed or canceled) and answer it; default ${WAIT_DEFAULT_SECONDS} s, at most ${WAIT_MAX_SECONDS} s a call. Out of time: an error operation_wait_timeout with the operation as it is now (it keeps running: call again). Needs scope ${retrieve.scope}.`,
  inputSchema: schemaOf(WaitInput, 'input'),
  outputSchema: schemaOf(retrieve.output, 'output'),
  annotations: { title: 'Operations: wait', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

export interface WaitExtra {
  signal: AbortSignal;
  /** The live event stream: an `operation.*` event of this operation, from any process, ends a wait. */
  stream?: EventStream;
  progressToken?: string | number;
  sendNotification: (n: ServerNotification) => Promise<void>;
}

type Op = { status: string; waiting_reason?: string | null } & Record<string, unknown>;

export async function waitForOperation(c: McpCall, args: Record<string, unknown>, extra: WaitExtra): Promise<CallToolResult> {
  let live: AsyncIterableIterator<{ operation: string | null }> | undefined;
  try {
    const { id, timeout_seconds } = parseInput(WaitInput, args);
    const read = async () => (await invoke({ deps: c.deps, caller: c.caller }, retrieve, { params: { id } })).value as Op;
    const deadline = performance.now() + timeout_seconds * 1000;
    // Set when an event of the operation arrives: a read that started before it reads again without waiting.
    let woken = false;
    let wake = () => {};
    live = extra.stream?.subscribe(c.caller.organization.id, {});
    void (async () => {
      for await (const e of live ?? [])
        if (e.operation === id) {
          woken = true;
          wake();
        }
    })().catch(() => {});
    let op = await read();
    let step = 0;
    let last = '';
    for (;;) {
      const change = `${op.status}/${op.waiting_reason ?? ''}`;
      if (change !== last) {
        last = change;
        if (extra.progressToken !== undefined)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: {
              progressToken: extra.progressToken,
              progress: ++step,
              message: `${op.status}${op.waiting_reason ? ` (${op.waiting_reason})` : ''}`,
            },
          });
      }
      if (isTerminal(op.status)) return { content: [{ type: 'text', text: JSON.stringify(op) }], structuredContent: op };
      const left = deadline - performance.now();
      if (left <= 0 || extra.signal.aborted)
        return errorResult(
          {
            code: 'operation_wait_timeout',
            message: `Operation ${id} is still ${op.status} after ${timeout_seconds} s; it keeps running: wait again`,
            param: null,
          },
          c.requestId,
          { operation: op },
        );
      if (!woken) {
        const ms = Math.min(left, WAIT_BACKSTOP_MS);
        await new Promise<void>((resolve) => {
          wake = resolve;
          void (c.deps.operations?.nextChange(id, ms, extra.signal) ?? new Promise((r) => setTimeout(r, ms))).then(() => resolve());
        });
      }
      woken = false;
      op = await read();
    }
  } catch (e) {
    return errorResult(asDomainError(c.deps, e, c.requestId), c.requestId);
  } finally {
    void live?.return?.();
  }
}
