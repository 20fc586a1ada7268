import { newRequestId } from '../../src/domain/id.ts';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

/** Every response carries `Request-Id`; the same id is in error bodies and logs. */
export function requestContext(log: Logger): Middleware {
  return async (ctx, next) => {
    const requestId = newRequestId();
    ctx.state.requestId = requestId;
    ctx.set('Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      // Path only: query strings may carry cursors but never secrets; headers are not logged.
      log.info(
        { request_id: requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - started) },
        'request',
      );
    }
  };
}
