import type { PrismaClient } from '../db/generated/client.ts';
import type { Tx } from '../db/database.ts';
import { notify } from '../db/notify.ts';
import type { Brand, CachedToken, Credentials, Deps } from '../domain/context.ts';
import { PgListener } from './listener.ts';

/**
 * Per-process cache of authenticated platform tokens and selected brands, so
 * an authenticated request costs no database round trip.
 *
 * Invariant: a revoked or rotated token fails on the very next request, on
 * every process. Every change to a credential announces itself: on
 * PostgreSQL with NOTIFY from inside the changing transaction (queued for
 * every listening process at commit), in embedded mode (one process) after
 * commit. Each announcement empties the cache. Before a request may trust a
 * cached entry, this process's LISTEN connection completes one round trip
 * that started after the request arrived (`fresh(asOf)`): PostgreSQL
 * delivers pending notifications before answering it, so every change
 * committed before the request has been applied. Concurrent requests share
 * that round trip (an empty query), which costs far less than the lookups it
 * replaces. The pool's connections listen too (src/db/pool-listen.ts): any
 * statement the pool completes outside a transaction proves the same as of
 * when it was sent, so a request whose own read went to the database after it
 * arrived needs no round trip of its own (PlatformGate.authorizeProvisionally). A
 * lookup that started before an announcement never stores its (possibly
 * stale) row: the generation it read under has moved on. Without a working
 * LISTEN connection nothing is trusted. Expiry is checked against the clock
 * on every hit; `last_used_at` keeps its once-a-minute write.
 */
export const CREDENTIALS_CHANNEL = 'platform_credentials';
const MAX_ENTRIES = 10_000;
/** Backstop for a notification lost while the LISTEN connection reconnects. */
const MAX_AGE_MS = 60_000;

export class CredentialCache implements Credentials {
  private tokens = new Map<string, CachedToken>();
  private brands = new Map<string, { brand: Brand; cachedAt: number }>();
  private generation = 0;
  private readonly listener: PgListener;
  private listening: boolean;
  /** Start time of the newest completed sync round trip, and the round trips in flight and queued. */
  private syncedAsOf = -1;
  private inFlight: Promise<boolean> | undefined;
  private queued: Promise<boolean> | undefined;
  private readonly onInvalidate = new Set<() => void>();

  constructor(private readonly deps: Pick<Deps, 'db' | 'config' | 'log'>) {
    // Embedded mode is one process: in-process invalidation is complete.
    this.listening = deps.db.kind === 'pglite';
    this.provenByReads = this.listening;
    this.listener = new PgListener(deps, CREDENTIALS_CHANNEL, {
      notify: () => this.invalidate(),
      up: () => {
        this.invalidate(); // anything cached before is from before we listened
        this.listening = true;
      },
      // Authenticating from the database until the connection is back.
      down: () => {
        this.listening = false;
        this.invalidate();
      },
    });
  }

  /** See Credentials.provenByReads: embedded, every read is fresh; on PostgreSQL, once the pool listens. */
  provenByReads: boolean;

  async start(): Promise<void> {
    if (this.deps.db.kind !== 'postgres') return;
    this.provenByReads = !!this.deps.db.listenOnPool;
    this.deps.db.listenOnPool?.(CREDENTIALS_CHANNEL, {
      notify: () => this.invalidate(),
      delivered: (asOf) => {
        if (this.listening) this.syncedAsOf = Math.max(this.syncedAsOf, asOf);
      },
    });
    await this.listener.start();
  }

  async stop(): Promise<void> {
    this.listening = false;
    await this.listener.stop();
  }

  /** Also called on every invalidation (the kill switch drops its cached state). */
  subscribe(fn: () => void): void {
    this.onInvalidate.add(fn);
  }

  invalidate(): void {
    this.generation++;
    this.tokens.clear();
    this.brands.clear();
    for (const fn of this.onInvalidate) fn();
  }

  /**
   * True once every credential change committed before `asOf` (a
   * performance.now() time) has been applied to this cache; false when the
   * cache cannot be trusted (no LISTEN connection).
   */
  async fresh(asOf: number): Promise<boolean> {
    if (!this.listening) return false;
    if (this.deps.db.kind !== 'postgres') return true;
    if (this.syncedAsOf >= asOf) return true;
    if (!this.inFlight) return (this.inFlight = this.sync());
    this.queued ??= this.inFlight.then(() => {
      this.queued = undefined;
      return (this.inFlight = this.sync());
    });
    return this.queued;
  }

  private sync(): Promise<boolean> {
    const client = this.listener.client;
    if (!client) return Promise.resolve(false);
    const startedAt = performance.now();
    // An empty query is the cheapest round trip (nothing to parse, plan or return): PostgreSQL still sends
    // every pending notification before its ReadyForQuery, and pg emits them before the query resolves.
    const run: Promise<boolean> = client.query('').then(
      () => {
        this.syncedAsOf = Math.max(this.syncedAsOf, startedAt);
        return this.listening && this.listener.client === client;
      },
      () => false,
    );
    void run.then(() => {
      if (this.inFlight === run) this.inFlight = undefined;
    });
    return run;
  }

  /** The generation a lookup runs under; pass it back to `storeToken`/`storeBrand`. */
  get current(): number {
    return this.generation;
  }

  token(hash: string, now: number): CachedToken | undefined {
    const hit = this.tokens.get(hash);
    if (hit && now - hit.cachedAt > MAX_AGE_MS) {
      this.tokens.delete(hash);
      return undefined;
    }
    return hit;
  }

  storeToken(generation: number, hash: string, entry: Omit<CachedToken, 'cachedAt'>): void {
    if (!this.listening || generation !== this.generation) return;
    if (this.tokens.size >= MAX_ENTRIES) this.tokens.clear();
    this.tokens.set(hash, { ...entry, cachedAt: Date.now() });
  }

  brand(key: string): Brand | undefined {
    const hit = this.brands.get(key);
    if (hit && Date.now() - hit.cachedAt > MAX_AGE_MS) {
      this.brands.delete(key);
      return undefined;
    }
    return hit?.brand;
  }

  storeBrand(generation: number, key: string, brand: Brand): void {
    if (!this.listening || generation !== this.generation) return;
    if (this.brands.size >= MAX_ENTRIES) this.brands.clear();
    this.brands.set(key, { brand, cachedAt: Date.now() });
  }

  /**
   * Announces a credential change from inside its transaction (or right
   * after a plain write): NOTIFY on PostgreSQL, reaching every process at
   * commit; in this process the cache is emptied once the change commits.
   */
  async announce(tx: Tx | PrismaClient): Promise<void> {
    this.deps.db.afterCommit(tx, () => this.invalidate());
    if (this.deps.db.kind === 'postgres') await notify(tx, CREDENTIALS_CHANNEL, '');
  }
}
