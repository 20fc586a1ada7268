import type { Deps } from '../domain/context.ts';
import { DomainError, isDomainError } from '../domain/errors.ts';
import type { PlatformRequestHeaders, SurfaceBCaller } from '../domain/platform/request-auth.ts';
import { Loop } from './loop.ts';

/**
 * An open stream is a use of its credentials: it ends when a new request with
 * the same credentials would be refused (token revoked, rotated or expired,
 * kill switch engaged, brand gone), with the code that request would get.
 *
 * Streams are grouped by what authorized them (bearer and `Service-Brand`),
 * so a recheck costs one authorization per distinct grant, not one per
 * stream. A recheck runs when a credential change is announced (the
 * credential cache's invalidation: NOTIFY on PostgreSQL, reaching every
 * process at commit; in process on the embedded database; also when the
 * LISTEN connection comes back, covering anything missed while it was
 * down), at a token's expiry, and every `backstopMs` in case both were
 * missed. A recheck that fails for another reason (the database is down) ends
 * nothing: only a refusal proves the access is gone.
 */
export interface StreamGrant {
  headers: PlatformRequestHeaders;
  caller: SurfaceBCaller;
}

type End = (err: DomainError) => void;

interface Group {
  headers: PlatformRequestHeaders;
  ends: Set<End>;
  expiry?: NodeJS.Timeout;
}

/** Errors that do not prove the credentials were withdrawn. */
const TRANSIENT = new Set(['service_unavailable', 'rate_limited', 'internal_error']);
/** setTimeout's largest delay; a later expiry is caught by a recheck. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How a grant is authorized again: the platform gate's `authorize` (src/runtime/platform-gate.ts). */
export interface Authorizer {
  authorize(h: PlatformRequestHeaders, cost?: number): Promise<SurfaceBCaller>;
}

export class StreamAuthority {
  private readonly groups = new Map<string, Group>();
  /** Rechecks, coalesced (one pass at a time, and one more if asked during it), with the backstop as its poll. */
  private readonly loop = new Loop(
    () => this.checkAll(),
    (err) => this.deps.log.warn({ err }, 'stream authority recheck failed'),
  );

  constructor(
    private readonly deps: Pick<Deps, 'credentials' | 'log' | 'clock'>,
    private readonly gate: Authorizer,
    backstopMs = 30_000,
  ) {
    deps.credentials?.subscribe(() => this.recheck());
    this.loop.start(backstopMs, () => this.recheck());
  }

  /** Calls `end` once, when access ends; the returned function stops watching (call it when the stream ends on its own). */
  watch(grant: StreamGrant, end: End): () => void {
    const key = `${grant.headers.bearer ?? ''}\u0000${grant.headers.brand ?? ''}`;
    let group = this.groups.get(key);
    if (!group) {
      // Without the client's address: a recheck that finds the token revoked is no failed attempt of the client's.
      group = { headers: { bearer: grant.headers.bearer, brand: grant.headers.brand }, ends: new Set() };
      this.groups.set(key, group);
      const expiresAt = grant.caller.expiresAt;
      if (expiresAt) {
        const ms = expiresAt.getTime() - this.deps.clock.now().getTime();
        const expired = new DomainError('invalid_token', 'The platform token is unknown, revoked or expired');
        const g = group;
        // Ends at expiry without a database round trip: the token's expiry cannot move.
        if (ms <= MAX_TIMER_MS) (g.expiry = setTimeout(() => this.endGroup(key, g, expired), Math.max(0, ms))).unref();
      }
    }
    // A group is ended once: endGroup drops it and clears its streams, so `end` runs at most once.
    const g = group;
    g.ends.add(end);
    return () => {
      g.ends.delete(end);
      if (g.ends.size === 0 && this.groups.get(key) === g) this.dropGroup(key, g);
    };
  }

  /** Open streams being watched (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.ends.size;
    return n;
  }

  stop(): Promise<void> {
    for (const [key, g] of this.groups) this.dropGroup(key, g);
    return this.loop.stop();
  }

  /** Re-authorizes every grant (coalesced: one pass at a time, and one more if asked during it). */
  recheck(): void {
    if (this.groups.size) this.loop.kick();
  }

  private async checkAll(): Promise<void> {
    await Promise.all([...this.groups].map(([key, g]) => this.check(key, g)));
  }

  private async check(key: string, g: Group): Promise<void> {
    try {
      // Cost 0: a recheck is not the caller's request and must not spend its rate limit.
      await this.gate.authorize(g.headers, 0);
    } catch (err) {
      if (isDomainError(err) && !TRANSIENT.has(err.code)) return this.endGroup(key, g, err);
      this.deps.log.warn({ err }, 'stream authority recheck failed; streams stay open until the next recheck');
    }
  }

  private endGroup(key: string, g: Group, err: DomainError): void {
    if (this.groups.get(key) === g) this.dropGroup(key, g);
    for (const end of [...g.ends]) end(err);
    g.ends.clear();
  }

  private dropGroup(key: string, g: Group): void {
    clearTimeout(g.expiry);
    this.groups.delete(key);
  }
}
