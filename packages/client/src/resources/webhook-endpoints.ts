import type { PagePromise } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';
import { Resource, path, type ListParams } from './resource.ts';
import type { DeletedObject, WebhookDelivery, WebhookEndpoint, WebhookEndpointPolicy } from './types.ts';

/** Overrides of the deployment's delivery policy: an omitted field is left alone, null restores the deployment's setting. */
export type WebhookEndpointPolicyParams = { [K in keyof WebhookEndpointPolicy]?: WebhookEndpointPolicy[K] };

export interface WebhookEndpointCreateParams {
  url: string;
  description?: string;
  /** Public event types; empty or omitted subscribes to all of them. */
  enabledEvents?: string[];
  policy?: WebhookEndpointPolicyParams | null;
  ordering?: 'none' | 'subject';
}

export interface WebhookEndpointUpdateParams {
  url?: string;
  description?: string;
  enabledEvents?: string[];
  status?: 'enabled' | 'disabled';
  policy?: WebhookEndpointPolicyParams | null;
  ordering?: 'none' | 'subject';
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
  deliveries(endpointId: string, params: ListParams = {}, options?: RequestOptions): PagePromise<WebhookDelivery> {
    return this.page(path('/webhook_endpoints/{id}/deliveries', endpointId), params, options);
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
