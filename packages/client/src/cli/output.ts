import { PlatformError } from '../index.ts';
import { UsageError } from './credentials.ts';

/**
 * Exit codes scripts can branch on:
 * 0 success; 1 the API answered an error (its code is printed); 2 usage error
 * or missing credentials; 3 the server could not be reached (connection or
 * timeout); 4 `operations wait` timed out (the operation keeps running);
 * 5 `operations wait` ended in partial, failed or canceled.
 */
export const EXIT = { ok: 0, api: 1, usage: 2, unreachable: 3, waitTimeout: 4, operationNotSucceeded: 5 } as const;

export interface OutputOptions {
  json?: boolean;
}

/** `--json`: the result as JSON on stdout; otherwise the human rendering. */
export function print(opts: OutputOptions, value: unknown, human: () => string) {
  process.stdout.write(opts.json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

export function exitCodeFor(err: unknown): number {
  if (err instanceof UsageError) return EXIT.usage;
  if (err instanceof PlatformError) {
    if (err.code === 'connection_error' || err.code === 'timeout') return EXIT.unreachable;
    if (err.code === 'operation_wait_timeout') return EXIT.waitTimeout;
    return EXIT.api;
  }
  return EXIT.api;
}

/** One line on stderr: `error: <code>: <message> (request <id>)`, or the error as JSON with `--json`. */
export function reportError(opts: OutputOptions, err: unknown) {
  if (opts.json) {
    const e =
      err instanceof PlatformError
        ? { code: err.code, message: err.message, param: err.param, requestId: err.requestId, status: err.status }
        : { code: err instanceof UsageError ? 'usage' : 'error', message: (err as Error)?.message ?? String(err) };
    process.stderr.write(`${JSON.stringify({ error: e })}\n`);
    return;
  }
  if (err instanceof PlatformError) {
    const where = [err.param ? `param ${err.param}` : '', err.requestId ? `request ${err.requestId}` : ''].filter(Boolean).join(', ');
    process.stderr.write(`error: ${err.code}: ${err.message}${where ? ` (${where})` : ''}\n`);
  } else {
    process.stderr.write(`error: ${(err as Error)?.message ?? String(err)}\n`);
  }
}

/** A table of rows with aligned columns (no dependency for ten lines of padding). */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}
