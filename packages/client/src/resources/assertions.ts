import type { PagePromise } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';
import { Resource, path } from './resource.ts';
import type { AssertionEvent, AssertionSubject } from './types.ts';

export type AssertionCreateParams = AssertionSubject & {
  key: string;
  /** Booleans are stored as 1 or 0. */
  value?: boolean | number;
  /** RFC 3339, in the future. */
  expiresAt?: string | Date;
};

export type AssertionRevokeParams = AssertionSubject & { key: string };

export type AssertionListParams = AssertionSubject & {
  key?: string;
  includeExpired?: boolean;
  limit?: number;
  startingAfter?: string;
};

/** Assertions are organization-scoped claims; each response is one assertion event. */
export class Assertions extends Resource {
  create(params: AssertionCreateParams, options?: RequestOptions): Promise<AssertionEvent> {
    const { expiresAt, ...rest } = params;
    const body = {
      ...rest,
      ...(expiresAt === undefined ? {} : { expiresAt: expiresAt instanceof Date ? expiresAt.toISOString() : expiresAt }),
    };
    return this.one({ method: 'POST', path: '/assertions', body, idempotent: true, options });
  }

  /** Revoking an absent claim succeeds (200) and appends nothing. */
  revoke(params: AssertionRevokeParams, options?: RequestOptions): Promise<Record<string, any>> {
    return this.one({ method: 'POST', path: '/assertions/revoke', body: { ...params }, idempotent: true, options });
  }

  /** The subject's current claims. */
  list(params: AssertionListParams, options?: RequestOptions): PagePromise<AssertionEvent> {
    return this.page('/assertions', { ...params }, options);
  }

  /** One assertion event by its `asrt_` id (an id addresses an event, never the claim). */
  retrieveEvent(id: string, options?: RequestOptions): Promise<AssertionEvent> {
    return this.one({ method: 'GET', path: path('/assertions/{id}', id), options });
  }
}
