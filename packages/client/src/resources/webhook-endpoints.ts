import * as generated from '../generated/resources.ts';
import type { EndpointDeliveryQueryParams, EventDeliveryQueryParams, WebhookDelivery } from '../generated/types.ts';
import type { PagePromise } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';

/** Filters of a delivery log; every given one applies. */
export type DeliveryListParams = Omit<EventDeliveryQueryParams, `created[${string}]`> & {
  /** Creation time bounds (RFC 3339), sent as `created[gte]` etc. */
  created?: { gte?: string | Date; gt?: string | Date; lte?: string | Date; lt?: string | Date };
};

/** A delivery log's query: `created` as the API's bracketed parameters. */
export function deliveryQuery({ created, ...rest }: DeliveryListParams & { eventId?: string }): EndpointDeliveryQueryParams {
  return { ...rest, ...Object.fromEntries(Object.entries(created ?? {}).map(([op, v]) => [`created[${op}]`, v])) };
}

/** Organization-scoped: the client's `brand` does not apply. */
export class EventDestinations extends generated.EventDestinations {
  /** A destination's deliveries with their attempt logs, newest first. */
  deliveries(
    destinationId: string,
    params: DeliveryListParams & { eventId?: string } = {},
    options?: RequestOptions,
  ): PagePromise<WebhookDelivery> {
    return this.deliveryPage(destinationId, deliveryQuery(params), options);
  }
}

/** Organization-scoped: the client's `brand` does not apply. */
export class WebhookEndpoints extends generated.WebhookEndpoints {
  /** An endpoint's deliveries with their attempt logs, newest first. */
  deliveries(
    endpointId: string,
    params: DeliveryListParams & { eventId?: string } = {},
    options?: RequestOptions,
  ): PagePromise<WebhookDelivery> {
    return this.deliveryPage(endpointId, deliveryQuery(params), options);
  }
}
