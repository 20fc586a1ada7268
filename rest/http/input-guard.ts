import type { Middleware } from 'koa';
import { DomainError } from '../../src/domain/errors.ts';
import { guardInput, isStorableText } from '../../src/domain/input-guard.ts';

/** Characters of one query parameter's value (a URL carries ids, cursors, filters and timestamps, nothing long). */
export const MAX_QUERY_VALUE = 2_048;

/** Request headers whose values reach the domain (the bearer is only hashed and compared), with the name errors give them. */
const DOMAIN_HEADERS = ['idempotency-key', 'service-brand'].map(
  (name) => [name, name.replace(/(^|-)[a-z]/g, (c) => c.toUpperCase())] as const,
);

/**
 * The REST input boundary for everything but the body (readJsonBody guards
 * bodies): the path, the query string and the headers the domain reads must
 * hold storable text. A `%00` in the path would otherwise reach an id lookup
 * as U+0000 once the router decodes the parameter.
 */
export function restInputGuard(): Middleware {
  return (ctx, next) => {
    if (ctx.path.includes('%00')) throw new DomainError('invalid_request', 'The path contains an encoded NUL character (%00)', 'path');
    if (ctx.querystring)
      for (const [name, value] of Object.entries(ctx.query)) {
        if (!isStorableText(name))
          throw new DomainError('invalid_request', 'A query parameter name contains a NUL character or an unpaired surrogate');
        guardInput(value, name);
        for (const v of Array.isArray(value) ? value : [value])
          if (typeof v === 'string' && v.length > MAX_QUERY_VALUE)
            throw new DomainError('invalid_request', `${name} is longer than ${MAX_QUERY_VALUE} characters`, name);
      }
    for (const [name, shown] of DOMAIN_HEADERS) guardInput(ctx.get(name), shown);
    return next();
  };
}
