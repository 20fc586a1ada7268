import { RequestSender, type FetchLike, type RequestOptions } from './request-sender.ts';

interface CommonOptions {
  timeoutMs?: number;
  maxRetries?: number;
  maxRetryDelayMs?: number;
  fetch?: FetchLike;
}

export interface PlatformScope {
  scope: string;
  category: string;
  description: string;
  [field: string]: unknown;
}

export interface Unit {
  id: string;
  object: 'unit';
  type: string | null;
  caption: string | null;
  productionId: string | null;
  status: string;
  [field: string]: unknown;
}

export interface PlatformToken {
  id: string;
  name: string;
  tokenPrefix: string;
  /** `secret` (sk_<brand>_live_, scopes) or `publishable` (pk_live_, one brand, partner connect only). */
  kind: 'secret' | 'publishable';
  /** A publishable key's brand; null for a secret key. */
  brand: string | null;
  /** Empty for a publishable key. */
  scopes: string[];
  status: 'active' | 'revoked' | 'expired';
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt?: string;
}

export interface Wallet {
  object: 'wallet';
  brand: string;
  /** Minor units. */
  balance: number;
  updatedAt: string | null;
}

export interface OkResponse {
  ok?: boolean;
  success?: boolean;
}

/**
 * Surface A, the scope executor at `{base_url}` (e.g. `https://host/api`),
 * with a platform token. Responses are camelCased like Surface B's; creates
 * carry a generated Idempotency-Key (reused across retries) unless given.
 */
export class ScopeClient {
  readonly sender: RequestSender;
  readonly units: Units;

  constructor(opts: CommonOptions & { token: string; baseUrl: string }) {
    this.sender = new RequestSender({ ...opts, baseUrl: opts.baseUrl, token: opts.token });
    this.units = new Units(this.sender);
  }

  /** The scope registry (no auth needed, the token is sent anyway). */
  async scopes(options?: RequestOptions): Promise<PlatformScope[]> {
    return (await this.sender.request<{ scopes: PlatformScope[] }>({ method: 'GET', path: '/scopes', options })).body.scopes;
  }

  /** Executes one scope: `{ ok, scope, tokenId, mode?, object? }`. */
  async exec(
    scope: string,
    data: Record<string, unknown> = {},
    options?: RequestOptions,
  ): Promise<{ ok: boolean; scope: PlatformScope; tokenId: string; [k: string]: any }> {
    return (await this.sender.request({ method: 'POST', path: '/scopes_exec', body: { scope, data }, idempotent: true, options })).body;
  }

  /** `{ ok, orgId, orgName, orgSlug, scopes, ... }` for the token. */
  async smoke(
    options?: RequestOptions,
  ): Promise<{ ok: boolean; orgId: string; orgName: string; orgSlug: string; scopes: string[]; [k: string]: any }> {
    return (await this.sender.request({ method: 'POST', path: '/smoke', options })).body;
  }
}

class Units {
  constructor(private readonly sender: RequestSender) {}

  async list(
    params: { page?: number; perPage?: number } = {},
    options?: RequestOptions,
  ): Promise<{ units: Unit[]; page?: number; perPage?: number; hasMore?: boolean }> {
    return (await this.sender.request({ method: 'POST', path: '/units/list', body: params, options })).body;
  }

  /** `duplicate` is true when the Idempotency-Key replayed an earlier create. */
  async create(
    params: { type?: string; caption?: string; productionId?: string },
    options?: RequestOptions,
  ): Promise<{ unit: Unit; duplicate: boolean }> {
    return (await this.sender.request({ method: 'POST', path: '/units/create', body: params, idempotent: true, options })).body;
  }

  /** Only a draft unit may be deleted (else `unit_not_draft`). */
  async delete(unitId: string, options?: RequestOptions): Promise<OkResponse> {
    return (await this.sender.request({ method: 'POST', path: '/units/delete', body: { unitId }, options })).body;
  }
}

/**
 * Token management at `{dashboard_base_url}` with a dashboard user token.
 * create and rotate are not idempotent on the server, so they are retried on
 * 429 only, never on a 5xx that might have minted a token.
 */
export class TokenClient {
  readonly sender: RequestSender;

  constructor(opts: CommonOptions & { userToken: string; dashboardBaseUrl: string }) {
    this.sender = new RequestSender({ ...opts, baseUrl: opts.dashboardBaseUrl, token: opts.userToken });
  }

  /** Metadata only, newest first. */
  async list(options?: RequestOptions): Promise<PlatformToken[]> {
    return (await this.sender.request<{ tokens: PlatformToken[] }>({ method: 'GET', path: '/platform/tokens', options })).body.tokens;
  }

  /**
   * The secret is in the result once, never again. A secret key takes `scopes`; a publishable key
   * (`kind: 'publishable'`, `pk_live_`) takes the `brand` (id or slug) it is bound to and no scopes.
   */
  async create(
    params:
      | { name: string; kind?: 'secret'; scopes: string[]; expiresAt?: string | Date }
      | { name: string; kind: 'publishable'; brand: string; expiresAt?: string | Date },
    options?: RequestOptions,
  ): Promise<{ token: PlatformToken; secret: string }> {
    const body = { ...params, expiresAt: params.expiresAt instanceof Date ? params.expiresAt.toISOString() : params.expiresAt };
    return (await this.sender.request({ method: 'POST', path: '/platform/tokens/create', body, options })).body;
  }

  async revoke(tokenId: string, options?: RequestOptions): Promise<OkResponse> {
    return (await this.sender.request({ method: 'POST', path: '/platform/tokens/revoke', body: { tokenId }, options })).body;
  }

  /** Revokes the token and returns its replacement (same scopes) with the new secret, once. */
  async rotate(tokenId: string, options?: RequestOptions): Promise<{ token: PlatformToken; secret: string }> {
    return (await this.sender.request({ method: 'POST', path: '/platform/tokens/rotate', body: { tokenId }, options })).body;
  }
}

/**
 * The operator interface at `{origin}/operator` (operator token): kill switch
 * and wallet top-ups. Used by the `platform` CLI.
 */
export class OperatorClient {
  readonly sender: RequestSender;

  constructor(opts: CommonOptions & { operatorToken: string; origin: string }) {
    this.sender = new RequestSender({ ...opts, baseUrl: `${opts.origin.replace(/\/+$/, '')}/operator`, token: opts.operatorToken });
  }

  /**
   * Appends a public test event to an organization (`data.test` is true), to
   * exercise feeds and webhook receivers (`platform trigger`). Resolves to the
   * new event's id; it reaches readers once sequenced.
   */
  async appendTestEvent(
    params: {
      organizationId: string;
      type: string;
      subject?: { type: string; id: string };
      data?: Record<string, unknown>;
      brand?: string;
    },
    options?: RequestOptions,
  ): Promise<{ id: string }> {
    const { subject = { type: 'test', id: 'test_1' }, ...rest } = params;
    return (await this.sender.request({ method: 'POST', path: '/events', body: { ...rest, subject }, options })).body;
  }

  async killSwitch(options?: RequestOptions): Promise<{ engaged: boolean; updatedAt: string | null }> {
    return (await this.sender.request({ method: 'GET', path: '/kill_switch', options })).body;
  }

  async setKillSwitch(engaged: boolean, options?: RequestOptions): Promise<{ engaged: boolean; updatedAt: string | null }> {
    return (await this.sender.request({ method: 'POST', path: '/kill_switch', body: { engaged }, options })).body;
  }

  /**
   * Credits a brand's wallet (brand id; amount in minor units) and wakes
   * launches waiting on funding. Sent with an Idempotency-Key (generated
   * unless given), so a retry after a 5xx credits once.
   */
  async topUpWallet(brandId: string, params: { amount: number }, options?: RequestOptions): Promise<Wallet> {
    return (
      await this.sender.request({
        method: 'POST',
        path: `/brands/${encodeURIComponent(brandId)}/wallet/top_up`,
        body: params,
        options,
        idempotent: true,
      })
    ).body;
  }

  async wallet(brandId: string, options?: RequestOptions): Promise<Wallet> {
    return (await this.sender.request({ method: 'GET', path: `/brands/${encodeURIComponent(brandId)}/wallet`, options })).body;
  }
}
