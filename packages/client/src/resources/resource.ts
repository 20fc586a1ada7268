import { pagePromise, type Page, type PagePromise } from '../list.ts';
import type { RequestOptions, RequestSender, RequestSpec } from '../request-sender.ts';

/**
 * Base of every Surface B resource: one sender, and the two response rules
 * of the client library: wrapped single objects are unwrapped, lists page.
 */
export abstract class Resource {
  constructor(protected readonly sender: RequestSender) {}

  /** A single object; `{ <envelope>: {...} }` on the wire is returned as the object. */
  protected async one<T>(spec: RequestSpec, envelope?: string): Promise<T> {
    const { body } = await this.sender.request(spec);
    return unwrap(body, envelope) as T;
  }

  protected page<T extends { id: string }>(path: string, params: ListParams, options?: RequestOptions): PagePromise<T> {
    const { startingAfter, ...rest } = params;
    return pagePromise<T>(
      (cursor) => this.sender.request<Page<T>>({ method: 'GET', path, query: { ...rest, startingAfter: cursor }, options }),
      startingAfter,
    );
  }
}

export interface ListParams {
  limit?: number;
  startingAfter?: string;
  [param: string]: unknown;
}

/**
 * Unwraps `{ webhook_endpoint: {...} }` (already camelCased to
 * `{ webhookEndpoint }`) when `envelope` names the key, or, without a name, a
 * body whose only key holds an object and which has no `object` field of its own.
 */
export function unwrap(body: any, envelope?: string): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  if (envelope !== undefined && envelope in body) return body[envelope];
  const keys = Object.keys(body);
  if (envelope === undefined && !('object' in body) && keys.length === 1) {
    const inner = body[keys[0]!];
    if (typeof inner === 'object' && inner !== null && !Array.isArray(inner)) return inner;
  }
  return body;
}

export function path(template: string, ...ids: string[]): string {
  let i = 0;
  return template.replace(/\{[a-z_]+\}/gi, () => encodeURIComponent(ids[i++] ?? ''));
}
