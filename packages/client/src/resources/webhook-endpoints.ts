import type { PagePromise } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';
import { Resource, path, type ListParams } from './resource.ts';
import type { DeletedObject, Operation, WebhookDelivery, WebhookEndpoint, WebhookEndpointPolicy } from './types.ts';

/** Overrides of the deployment's delivery policy: an omitted field is left alone, null restores the deployment's setting. */
export type WebhookEndpointPolicyParams = { [K in keyof WebhookEndpointPolicy]?: WebhookEndpointPolicy[K] };

/** The feed's brand and subject-type filters (brands: ids or slugs); null on update removes the filter. */
export interface WebhookEndpointFilterParams {
  brands?: string[];
  subjectTypes?: string[];
}

export interface WebhookEndpointCreateParams {
  url: string;
  description?: string;
  /** Public event types; empty or omitted subscribes to all of them. */
  enabledEvents?: string[];
  filter?: WebhookEndpointFilterParams | null;
  policy?: WebhookEndpointPolicyParams | null;
  ordering?: 'none' | 'subject';
}

export interface WebhookEndpointUpdateParams {
  url?: string;
  description?: string;
  enabledEvents?: string[];
  filter?: WebhookEndpointFilterParams | null;
  status?: 'enabled' | 'disabled';
  policy?: WebhookEndpointPolicyParams | null;
  ordering?: 'none' | 'subject';
}

/** What to re-send: a seq range (`startingAfter` exclusive) or a time range, optionally some types or only what failed. */
export interface WebhookEndpointReplayParams {
  startingAfter?: number;
  /** RFC 3339: the events appended at or after this time. */
  since?: string;
  /** The last event replayed: a seq (inclusive) or an RFC 3339 time; default the newest when accepted. */
  until?: number | string;
  types?: string[];
  onlyFailed?: boolean;
}

/** Filters of a delivery log; every given one applies. */
export interface DeliveryListParams extends ListParams {
  status?: WebhookDelivery['status'];
  /** One public event type. */
  eventType?: string;
  /** Creation time bounds (RFC 3339), sent as `created[gte]` etc. */
  created?: { gte?: string; gt?: string; lte?: string; lt?: string };
  /** The last attempt's HTTP status class; `error`: no response. */
  statusClass?: '2xx' | '3xx' | '4xx' | '5xx' | 'error';
}

/** A delivery log's query: `created` as the API's bracketed parameters. */
export function deliveryQuery({ created, ...rest }: DeliveryListParams): ListParams {
  return { ...rest, ...Object.fromEntries(Object.entries(created ?? {}).map(([op, v]) => [`created[${op}]`, v])) };
}

/** Organization-scoped: the client's `brand` does not apply. */
export class WebhookEndpoints extends Resource {
  create(params: WebhookEndpointCreateParams, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.one({ method: 'POST', path: '/webhook_endpoints', body: { ...params }, idempotent: true, options }, 'webhookEndpoint');
  }

  /** Newest first. */
  list(params: ListParams = {}, options?: RequestOptions): PagePromise<WebhookEndpoint> {
    return this.page('/webhook_endpoints', params, options);
  }

  retrieve(id: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.one({ method: 'GET', path: path('/webhook_endpoints/{id}', id), options }, 'webhookEndpoint');
  }

  update(id: string, params: WebhookEndpointUpdateParams, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.one(
      { method: 'POST', path: path('/webhook_endpoints/{id}', id), body: { ...params }, idempotent: true, options },
      'webhookEndpoint',
    );
  }

  /** Installs a fresh secret (returned once); the previous one stays valid for 24 h. */
  rotateSecret(id: string, options?: RequestOptions): Promise<WebhookEndpoint> {
    return this.one(
      { method: 'POST', path: path('/webhook_endpoints/{id}/rotate_secret', id), idempotent: true, options },
      'webhookEndpoint',
    );
  }

  del(id: string, options?: RequestOptions): Promise<DeletedObject> {
    return this.one({ method: 'DELETE', path: path('/webhook_endpoints/{id}', id), idempotent: true, options });
  }

  /** An endpoint's deliveries with their attempt logs, newest first. */
  deliveries(
    endpointId: string,
    params: DeliveryListParams & { eventId?: string } = {},
    options?: RequestOptions,
  ): PagePromise<WebhookDelivery> {
    return this.page(path('/webhook_endpoints/{id}/deliveries', endpointId), deliveryQuery(params), options);
  }

  /** Re-sends past events to the endpoint: the replay operation (202), whose progress counts what it did. */
  replay(id: string, params: WebhookEndpointReplayParams, options?: RequestOptions): Promise<Operation> {
    return this.one(
      { method: 'POST', path: path('/webhook_endpoints/{id}/replay', id), body: { ...params }, idempotent: true, options },
      'operation',
    );
  }

  /** Cancels the endpoint's live replay: the cancel operation. */
  cancelReplay(id: string, options?: RequestOptions): Promise<Operation> {
    return this.one({ method: 'POST', path: path('/webhook_endpoints/{id}/replay/cancel', id), idempotent: true, options }, 'operation');
  }

  /** Re-queues a failing or exhausted delivery for an immediate attempt (resend). */
  retryDelivery(endpointId: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDelivery> {
    return this.one(
      {
        method: 'POST',
        path: path('/webhook_endpoints/{id}/deliveries/{delivery}/retry', endpointId, deliveryId),
        idempotent: true,
        options,
      },
      'webhookDelivery',
    );
  }
}
