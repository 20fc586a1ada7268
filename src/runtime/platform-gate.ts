import type { Deps } from '../domain/context.ts';
import {
  type Admission,
  authorizePlatformRequest,
  type PlatformRequestHeaders,
  type SurfaceBCaller,
} from '../domain/platform/request-auth.ts';
import { TokenBuckets } from '../domain/platform/rate-limit.ts';
import type { KillSwitch } from './kill-switch.ts';
import { StreamAuthority } from './stream-authority.ts';

/**
 * The process-level part of the Surface B pipeline (the rule itself is src/domain/platform/request-auth.ts): the kill
 * switch, the per-token and per-organization buckets, and the open streams it admitted.
 */
export class PlatformGate implements Admission {
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
    this.buckets = new TokenBuckets('platform token', deps.config.rateLimitPerSecond, deps.config.rateLimitBurst, now);
    const { perSecond, burst } = deps.config.organizationRateLimit;
    this.organizations = new TokenBuckets('organization', perSecond, burst, now, 'organization');
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
   *
   * `read`: the request is a read that confirms after it has read. Where the pool's connections listen
   * (src/db/pool-listen.ts), its freshness is asked for only then: a statement of its own that went to the database
   * after the request arrived has usually proven it already, so no round trip is made for it.
   */
  async authorizeProvisionally(h: PlatformRequestHeaders, cost = 1, read = false): Promise<SurfaceBCaller> {
    const cache = this.deps.credentials;
    if (!cache) return this.authorize(h, cost);
    const asOf = performance.now();
    const generation = cache.current;
    let fresh = read && cache.provenByReads ? undefined : cache.fresh(asOf);
    const settled = () => (fresh ??= cache.fresh(asOf)).then((ok) => ok && cache.current === generation);
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
