import { httpStatus } from '../../src/http/error-status.ts';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import type { Database } from '../../src/db/database.ts';
import { databaseUnavailable, DomainError, isDomainError } from '../../src/domain/errors.ts';
import { refusalHeaders } from '../../src/http/rate-limit-headers.ts';

/**
 * The two error envelopes, written in one place each.
 * - Surface A (and token management, operator): ErrorResponse
 *   `{ error, message, required_scope?, request_id }`.
 * - Surface B: `{ error: { code, message, param, request_id } }`.
 * Unknown errors are logged with the request id and answered as a bare 500.
 */
export type EnvelopeKind = 'surface_a' | 'surface_b';

/** What a failure answers on every front: a DomainError as it is, a lost database as its 503 (a storage fault noted for readiness), anything else an internal error, logged. */
export function toDomainError(e: unknown, log: Logger, db: Pick<Database, 'storageFault'>, requestId: string): DomainError {
  if (isDomainError(e)) return e;
  const unavailable = databaseUnavailable(e);
  if (unavailable) {
    if (unavailable.details.fault === 'storage') db.storageFault();
    log.warn({ err: e, request_id: requestId }, 'database unavailable');
    return unavailable;
  }
  log.error({ err: e, request_id: requestId }, 'unhandled error');
  return new DomainError('internal_error', 'An internal error occurred; retry later or contact support with the request id');
}

export function writeError(ctx: Context, kind: EnvelopeKind, err: DomainError): void {
  const requestId = ctx.state.requestId as string;
  ctx.state.errorCode = err.code; // for the request's log line
  ctx.status = httpStatus(err);
  ctx.set(refusalHeaders(err));
  if (err.code === 'method_not_allowed' && typeof err.details.allow === 'string') ctx.set('Allow', err.details.allow);
  ctx.body = errorBody(kind, err, requestId);
}

/** The body of an error in `kind`'s envelope. */
export function errorBody(kind: EnvelopeKind, err: DomainError, requestId: string): object {
  return kind === 'surface_b'
    ? { error: { code: err.code, message: err.message, param: err.param, request_id: requestId } }
    : {
        error: err.code,
        message: err.message,
        ...(typeof err.details.required_scope === 'string' ? { required_scope: err.details.required_scope } : {}),
        ...(err.param ? { param: err.param } : {}),
        request_id: requestId,
      };
}

/**
 * Surface B owns `/v1/` and the MCP front `/mcp` (src/mcp/http.ts); everything else (Surface A, token management,
 * operator, unknown paths) answers in Surface A's shape. The prefix is
 * compared without case and with repeated slashes folded so a Surface B
 * client that mistypes a path (`/V1/platform/...`, `//v1/...`) still gets an
 * error it can parse; routing itself is exact (rest/http/route.ts).
 */
export const envelopeKindOf = (path: string): EnvelopeKind => (/^\/+(v1(\/|$)|mcp$)/i.test(path) ? 'surface_b' : 'surface_a');

/** The one error handler of the REST stack: every error thrown below it is answered in its path's envelope; a storage fault is also told to the database's readiness. */
export function errorEnvelope(log: Logger, db: Pick<Database, 'storageFault'>): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (e) {
      writeError(ctx, envelopeKindOf(ctx.path), toDomainError(e, log, db, ctx.state.requestId));
    }
  };
}
