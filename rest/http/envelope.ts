import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { databaseUnavailable, DomainError, isDomainError } from '../../src/domain/errors.ts';
import { setRateLimitHeaders } from './rate-limit.ts';

/**
 * The two error envelopes, written in one place each.
 * - Surface A (and token management, operator): ErrorResponse
 *   `{ error, message, required_scope?, request_id }`.
 * - Surface B: `{ error: { code, message, param, request_id } }`.
 * Unknown errors are logged with the request id and answered as a bare 500.
 */
export type EnvelopeKind = 'surface_a' | 'surface_b';

function toDomainError(e: unknown, log: Logger, requestId: string): DomainError {
  if (isDomainError(e)) return e;
  const unavailable = databaseUnavailable(e);
  if (unavailable) {
    log.warn({ err: e, request_id: requestId }, 'database unavailable');
    return unavailable;
  }
  log.error({ err: e, request_id: requestId }, 'unhandled error');
  return new DomainError('internal_error', 'An internal error occurred; retry later or contact support with the request id');
}

export function writeError(ctx: Context, kind: EnvelopeKind, err: DomainError): void {
  const requestId = ctx.state.requestId as string;
  ctx.status = err.status;
  const retryAfter = err.details.retry_after;
  if (typeof retryAfter === 'number') ctx.set('Retry-After', String(retryAfter));
  if (err.code === 'rate_limited' && typeof err.details.limit === 'number' && typeof retryAfter === 'number') {
    setRateLimitHeaders(ctx, { limit: err.details.limit, remaining: 0, resetSeconds: retryAfter });
  }
  if (err.code === 'method_not_allowed' && typeof err.details.allow === 'string') ctx.set('Allow', err.details.allow);
  ctx.body =
    kind === 'surface_b'
      ? { error: { code: err.code, message: err.message, param: err.param, request_id: requestId } }
      : {
          error: err.code,
          message: err.message,
          ...(typeof err.details.required_scope === 'string' ? { required_scope: err.details.required_scope } : {}),
          ...(err.param ? { param: err.param } : {}),
          request_id: requestId,
        };
}

export function errorEnvelope(kind: EnvelopeKind, log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (e) {
      writeError(ctx, kind, toDomainError(e, log, ctx.state.requestId));
    }
  };
}
