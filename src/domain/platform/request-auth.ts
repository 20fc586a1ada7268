import type { Tx } from '../../db/database.ts';
import type { Deps, PlatformCaller } from '../context.ts';
import { DomainError } from '../errors.ts';
import type { KillSwitch } from '../operator/kill-switch.ts';
import type { ClientKey } from '../token/failed-authentication.ts';
import { authenticatePlatformKey } from '../token/authenticate.ts';
import { classifyKey } from '../token/key-kind.ts';
import { TokenBuckets, type RateLimitState } from './rate-limit.ts';
import { StreamAuthority } from './stream-authority.ts';

/**
 * The Surface B request pipeline, shared by REST `/v1/platform` and GraphQL,
 * in the spec's order: kill switch, test-mode keys, missing bearer, key
 * validity, publishable keys, brand selection. It runs before any id is
 * looked up, so an unauthenticated caller can never learn whether an object
 * exists.
 */
export interface Brand {
  id: string;
  slug: string;
  name: string;
}

export interface SurfaceBCaller extends PlatformCaller {
  brand: Brand;
  rateLimit: RateLimitState;
  /**
   * Set on a provisional caller (`PlatformGate.authorizeProvisionally`):
   * resolves once its admission is known to hold as of the request's
   * arrival, else rejects with what `authorize` would have answered (401,
   * 503, ...). Memoized. Whoever holds such a caller awaits it before
   * answering. It may read the database: never await it inside a
   * transaction (embedded, that waits for the transaction itself).
   */
  confirm?: () => Promise<void>;
  /** With `confirm`: true once the admission is known to hold, false when `confirm` must decide; never touches the database. */
  admissionHeld?: () => Promise<boolean>;
}

export interface PlatformRequestHeaders {
  /** The bearer credential: null when absent, '' when the header is not a bearer. */
  bearer: string | null;
  /** `Service-Brand`: a brand id or slug. */
  brand?: string;
  /** The client's address key (src/http/client-address.ts): a failed key spends from its failed-authentication bucket. */
  client?: ClientKey;
}

/** Process-wide state the pipeline consults: the kill switch, the per-token and per-organization buckets; and the open streams it admitted. */
export class PlatformGate {
  readonly buckets: TokenBuckets;
  /** One budget per organization across all its tokens (Surface A charges it too: rest/surface-a/auth.ts). */
  readonly organizations: TokenBuckets;
  /** Open streams, each ended when its credentials would no longer be admitted. */
  readonly streams: StreamAuthority;
  constructor(
    private readonly deps: Deps,
    readonly killSwitch: KillSwitch,
  ) {
    const now = () => deps.clock.now().getTime();
    this.buckets = new TokenBuckets(deps.config.rateLimitPerSecond, deps.config.rateLimitBurst, now);
    const { perSecond, burst } = deps.config.organizationRateLimit;
    this.organizations = new TokenBuckets(perSecond, burst, now, 'organization');
    this.streams = new StreamAuthority(deps, this);
  }

  /** `cost`: what the request is charged in rate-limit tokens (requestCost of the list items it asks for). */
  authorize(h: PlatformRequestHeaders, cost = 1): Promise<SurfaceBCaller> {
    return authorizePlatformRequest(this.deps, this, h, cost, performance.now());
  }

  /**
   * The same checks from the credential cache as it is now, without waiting
   * for the freshness round trip (credential-cache.ts), which starts at once
   * and runs beside the request's own work; `confirm` awaits it. If any
   * change was applied meanwhile (the cache's generation moved) or the cache
   * cannot be trusted, `confirm` authorizes the request again as of its
   * arrival, uncharged, and rejects as `authorize` would have. For a write
   * that checks `admissionHeld` before its commit (and otherwise rolls back,
   * confirms and retries: a batched action, src/domain/action/action.ts): the round trip leaves its
   * critical path.
   */
  async authorizeProvisionally(h: PlatformRequestHeaders, cost = 1): Promise<SurfaceBCaller> {
    const cache = this.deps.credentials;
    if (!cache) return this.authorize(h, cost);
    const asOf = performance.now();
    const generation = cache.current;
    const fresh = cache.fresh(asOf);
    const settled = () => fresh.then((ok) => ok && cache.current === generation);
    let caller: SurfaceBCaller;
    try {
      // asOf -Infinity: whatever the cache holds now is fresh enough (still nothing while it is not listening).
      caller = await authorizePlatformRequest(this.deps, this, h, cost, -Infinity);
    } catch (e) {
      // A refusal from stale state (a kill switch released before the request arrived) is not final.
      if (await settled()) throw e;
      return authorizePlatformRequest(this.deps, this, h, cost, asOf);
    }
    let held: Promise<boolean> | undefined;
    const admissionHeld = () => (held ??= settled());
    let confirmation: Promise<void> | undefined;
    const confirm = () =>
      (confirmation ??= admissionHeld().then(async (ok) => {
        if (!ok) await authorizePlatformRequest(this.deps, this, h, 0, asOf);
      }));
    return { ...caller, confirm, admissionHeld };
  }
}

/** `asOf`: one freshness point for the whole request; cached state must include every change committed before it (performance.now()). */
async function authorizePlatformRequest(
  deps: Deps,
  gate: PlatformGate,
  h: PlatformRequestHeaders,
  cost: number,
  asOf: number,
): Promise<SurfaceBCaller> {
  if (await gate.killSwitch.engaged(asOf)) {
    throw new DomainError('developer_access_paused', 'Developer access is paused by the operator; retry later');
  }
  if (h.bearer) classifyKey(h.bearer, deps.config.keyBrand);
  if (!h.bearer) {
    throw new DomainError('platform_token_required', 'Authorization: Bearer sk_<brand>_live_... is required (no body token, no cookie)');
  }
  const caller = await authenticatePlatformKey(deps, h.bearer, asOf, h.client);
  const rateLimit = TokenBuckets.takeAll(cost, [
    [gate.buckets, caller.tokenId],
    [gate.organizations, caller.organization.id],
  ]);
  return { ...caller, rateLimit, brand: await selectBrand(deps, caller.organization.id, h.brand, asOf) };
}

/** The `Service-Brand` brand (id or slug), else the organization's oldest brand. */
export async function selectBrand(
  deps: Deps,
  organizationId: string,
  wanted: string | undefined,
  asOf = performance.now(),
  /** Where a lookup the cache cannot answer reads: a caller inside a transaction passes it (embedded, the pool is that one connection). */
  db: Pick<Tx, 'brand'> = deps.db.prisma,
): Promise<Brand> {
  const key = `${organizationId}\u0000${wanted ?? ''}`;
  const cached = deps.credentials && (await deps.credentials.fresh(asOf)) ? deps.credentials.brand(key) : undefined;
  if (cached) return cached;
  const generation = deps.credentials?.current ?? 0;
  const select = { id: true, slug: true, name: true } as const;
  const brand =
    wanted === undefined || wanted === ''
      ? await db.brand.findFirst({ where: { organizationId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], select })
      : await db.brand.findFirst({ where: { organizationId, OR: [{ id: wanted }, { slug: wanted }] }, select });
  if (!brand) {
    // Same answer whether the brand is another organization's or nowhere: existence never leaks.
    throw new DomainError('brand_not_found', `No brand '${wanted ?? ''}' in this organization`, 'Service-Brand');
  }
  deps.credentials?.storeBrand(generation, key, brand);
  return brand;
}
