import type { PagePromise } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';
import { Resource, path } from './resource.ts';
import type { TypedEvent, WebhookDelivery } from './types.ts';
import { deliveryQuery, type DeliveryListParams } from './webhook-endpoints.ts';

export interface EventListParams {
  /** One public event type. */
  type?: string;
  /** Only events of these brands (ids or slugs, at most 20); organization-level events (`brand: null`) never match. */
  brands?: string[];
  /** Only events whose subject has one of these types (at most 20). */
  subjectTypes?: string[];
  /** Only events about this subject id. */
  subjectId?: string;
  /** 1 to 100, default 20. */
  limit?: number;
  /** A `seq` number or an `evt_` id: the page continues past it in `order`. */
  startingAfter?: string | number;
  /** `asc` (default): oldest first, the log to tail; `desc`: newest first (`{ order: 'desc', limit: 1 }` is the head). */
  order?: 'asc' | 'desc';
}

/** The wire form of a list filter: one comma-separated parameter. */
const commaList = (v: string[] | undefined) => (v === undefined ? undefined : v.join(','));

/** The feed: ascending `seq` (unlike other lists), so auto-paging tails the log; `order: 'desc'` pages back from the newest. */
export class Events extends Resource {
  list(params: EventListParams = {}, options?: RequestOptions): PagePromise<TypedEvent> {
    const { startingAfter, brands, subjectTypes, ...rest } = params;
    return this.page(
      '/events',
      {
        ...rest,
        brands: commaList(brands),
        subjectTypes: commaList(subjectTypes),
        startingAfter: startingAfter === undefined ? undefined : String(startingAfter),
      },
      options,
    );
  }

  /** One event's deliveries across the organization's endpoints, newest first (scope webhooks:read). */
  deliveries(eventId: string, params: DeliveryListParams = {}, options?: RequestOptions): PagePromise<WebhookDelivery> {
    return this.page(path('/events/{id}/deliveries', eventId), deliveryQuery(params), options);
  }

  /** One event by `evt_` id, once sequenced. */
  retrieve(id: string, options?: RequestOptions): Promise<TypedEvent> {
    return this.one({ method: 'GET', path: path('/events/{id}', id), options });
  }
}
