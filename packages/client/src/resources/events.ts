import * as generated from '../generated/resources.ts';
import type { EventQueryParams, WebhookDelivery } from '../generated/types.ts';
import type { PagePromise } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';
import type { TypedEvent } from '../typed-event.ts';
import { deliveryQuery, type DeliveryListParams } from './webhook-endpoints.ts';

export type EventListParams = Omit<EventQueryParams, 'brands' | 'subjectTypes' | 'startingAfter'> & {
  /** Only events of these brands (ids or slugs, at most 20); organization-level events (`brand: null`) never match. */
  brands?: string[];
  /** Only events whose subject has one of these types (at most 20). */
  subjectTypes?: string[];
  /** A `seq` number or an `evt_` id: the page continues past it in `order`. */
  startingAfter?: string | number;
};

/** The wire form of a list filter: one comma-separated parameter. */
const commaList = (v: string[] | undefined) => (v === undefined ? undefined : v.join(','));

/** The feed: ascending `seq` (unlike other lists), so auto-paging tails the log; `order: 'desc'` pages back from the newest. */
export class Events extends generated.Events {
  list(params: EventListParams = {}, options?: RequestOptions): PagePromise<TypedEvent> {
    const { startingAfter, brands, subjectTypes, ...rest } = params;
    return this.listPage(
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
    return this.deliveryPage(eventId, deliveryQuery(params), options);
  }
}
