import type { Tx } from '../../db/database.ts';
import type { Brand, Deps, PlatformCaller } from '../context.ts';
import { brandByIdOrSlug, oldestBrand } from '../brand/store.ts';
import { DomainError } from '../errors.ts';
import type { ClientKey } from '../token/failed-authentication.ts';
import { authenticatePlatformKey } from '../token/authenticate.ts';
import { classifyKey } from '../token/key-kind.ts';
import { TokenBuckets, type RateLimitState } from './rate-limit.ts';

export type { Brand };

/**
 * The Surface B request pipeline, shared by REST `/v1/platform` and GraphQL,
 * in the spec's order: kill switch, test-mode keys, missing bearer, key
 * validity, publishable keys, brand selection. It runs before any id is
 * looked up, so an unauthenticated caller can never learn whether an object
 * exists.
 */
export interface SurfaceBCaller extends PlatformCaller {
  brand: Brand;
  rateLimit: RateLimitState;
  /**
   * Set on a provisional caller (`PlatformGate.authorizeProvisionally`, src/runtime/platform-gate.ts):
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

/**
 * What the pipeline consults besides the caller's headers: the kill switch and the per-token and per-organization
 * buckets, process-wide state that src/runtime/platform-gate.ts holds.
 */
export interface Admission {
  readonly killSwitch: { engaged(asOf?: number): Promise<boolean> };
  readonly buckets: TokenBuckets;
  /** One budget per organization across all its tokens (Surface A charges it too: rest/surface-a/auth.ts). */
  readonly organizations: TokenBuckets;
}

/** `asOf`: one freshness point for the whole request; cached state must include every change committed before it (performance.now()). */
export async function authorizePlatformRequest(
  deps: Deps,
  gate: Admission,
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
  const rateLimit = await TokenBuckets.takeAll(cost, [
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
  const brand =
    wanted === undefined || wanted === '' ? await oldestBrand(db, organizationId) : await brandByIdOrSlug(db, organizationId, wanted);
  if (!brand) {
    // Same answer whether the brand is another organization's or nowhere: existence never leaks.
    throw new DomainError('brand_not_found', `No brand '${wanted ?? ''}' in this organization`, 'Service-Brand');
  }
  deps.credentials?.storeBrand(generation, key, brand);
  return brand;
}
