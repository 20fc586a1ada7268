import type { PagePromise } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';
import { Resource, path } from './resource.ts';
import type { ListPageParams } from './relationships.ts';
import type { AssertionSubject, ConnectConfig, Connection, HandoffIssuer, Operation } from './types.ts';

export type ConnectionCreateParams = AssertionSubject & { provider: string; accountId: string; grants?: string[] };

/** An entity's accounts at providers, in the selected brand. */
export class Connections extends Resource {
  create(params: ConnectionCreateParams, options?: RequestOptions): Promise<Connection> {
    return this.one({ method: 'POST', path: '/connections', body: { ...params }, idempotent: true, options });
  }

  list(
    params: ListPageParams & { entity?: string; provider?: string; status?: Connection['status'] } = {},
    options?: RequestOptions,
  ): PagePromise<Connection> {
    return this.page('/connections', { ...params }, options);
  }

  retrieve(id: string, options?: RequestOptions): Promise<Connection> {
    return this.one({ method: 'GET', path: path('/connections/{id}', id), options });
  }

  /** Final; answers the teardown operation of each live deployment placed through it. */
  revoke(id: string, options?: RequestOptions): Promise<{ connection: Connection; teardowns: Operation[] }> {
    return this.one({ method: 'POST', path: path('/connections/{id}/revoke', id), idempotent: true, options });
  }
}

export type ConnectConfigParams = Partial<Omit<ConnectConfig, 'object' | 'brand' | 'livemode' | 'updatedAt'>>;

/** The selected brand's partner-connect configuration. */
export class ConnectConfigs extends Resource {
  retrieve(options?: RequestOptions): Promise<ConnectConfig> {
    return this.one({ method: 'GET', path: '/connect_config', options });
  }

  /** The fields given replace the stored ones; null clears. */
  update(params: ConnectConfigParams, options?: RequestOptions): Promise<ConnectConfig> {
    return this.one({ method: 'POST', path: '/connect_config', body: { ...params }, idempotent: true, options });
  }
}

export type HandoffIssuerCreateParams =
  | { name: string; algorithm: 'HS256'; secret?: string }
  | { name: string; algorithm: 'EdDSA'; publicKey: Record<string, unknown> | string };

/** Signed-handoff issuers of the selected brand. */
export class HandoffIssuers extends Resource {
  /** HS256: the answer carries the secret (generated when omitted), shown this once. */
  create(params: HandoffIssuerCreateParams, options?: RequestOptions): Promise<HandoffIssuer> {
    return this.one({ method: 'POST', path: '/handoff/issuers', body: { ...params }, idempotent: true, options });
  }

  list(params: ListPageParams = {}, options?: RequestOptions): PagePromise<HandoffIssuer> {
    return this.page('/handoff/issuers', { ...params }, options);
  }

  retrieve(id: string, options?: RequestOptions): Promise<HandoffIssuer> {
    return this.one({ method: 'GET', path: path('/handoff/issuers/{id}', id), options });
  }

  /** A new secret (HS256) or public key (EdDSA); the previous one verifies for 24 h. */
  rotate(
    id: string,
    params: { secret?: string; publicKey?: Record<string, unknown> | string } = {},
    options?: RequestOptions,
  ): Promise<HandoffIssuer> {
    return this.one({ method: 'POST', path: path('/handoff/issuers/{id}/rotate', id), body: { ...params }, idempotent: true, options });
  }

  delete(id: string, options?: RequestOptions): Promise<{ id: string; object: 'handoff_issuer'; deleted: true }> {
    return this.one({ method: 'DELETE', path: path('/handoff/issuers/{id}', id), idempotent: true, options });
  }
}
