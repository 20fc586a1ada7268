import pino from 'pino';
import type { Context } from 'koa';
import { expect, it } from 'vitest';
import { requestContext } from '../../rest/http/request-id.ts';

/** Request ids come from a pooled random buffer: well-formed, and never repeated across the pool's refills. */
it('every request gets a distinct req_ id of 24 hex digits, across several refills of the random pool', async () => {
  const middleware = requestContext(pino({ level: 'silent' }));
  const ids = new Set<string>();
  const n = 1_200; // the pool holds 341 ids
  for (let i = 0; i < n; i++) {
    const headers: Record<string, string> = {};
    const ctx = { state: {}, method: 'GET', path: '/healthz', status: 200, set: (k: string, v: string) => (headers[k] = v) } as unknown as Context;
    await middleware(ctx, async () => {});
    const id = (ctx.state as { requestId: string }).requestId;
    expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(headers['Request-Id']).toBe(id);
    ids.add(id);
  }
  expect(ids.size).toBe(n);
});
