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
const TRUE = Promise.resolve(true);
const FALSE = Promise.resolve(false);
const MAX_ENTRIES = 10_000;
/** Backstop for a notification lost while the LISTEN connection reconnects. */
const MAX_AGE_MS = 60_000;

export class CredentialCache implements Credentials {
  private tokens = new Map<string, CachedToken>();
  private brands = new Map<string, { brand: Brand; cachedAt: number }>();
  private generation = 0;
  private readonly listener: PgListener;
  private listening: boolean;
  /** Every change committed before this time has been applied; the requests waiting for a later time, and whether a round trip is in flight. */
  private syncedAsOf = -1;
  private readonly waiting = new Set<{ asOf: number; resolve: (ok: boolean) => void }>();
  private syncing = false;
  private readonly onInvalidate = new Set<() => void>();

  constructor(private readonly deps: Pick<Deps, 'db' | 'config' | 'log'>) {
    // Embedded mode is one process: in-process invalidation is complete.
    this.listening = deps.db.kind === 'pglite';
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

  /** See Credentials.provenByReads: embedded, every read is fresh; on PostgreSQL, where the pool can listen (start). */
  get provenByReads(): boolean {
    return this.deps.db.kind !== 'postgres' || this.deps.db.listenOnPool !== undefined;
  }

  async start(): Promise<void> {
    if (this.deps.db.kind !== 'postgres') return;
    this.deps.db.listenOnPool?.(CREDENTIALS_CHANNEL, {
      notify: () => this.invalidate(),
      delivered: (asOf) => this.delivered(asOf),
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
   * cache cannot be trusted (no LISTEN connection). Whatever proves it first
   * settles it: the LISTEN connection's round trip, or a statement the pool
   * completed (`delivered`). One round trip is in flight at most; when it
   * returns, the next starts only for requests nothing has proven yet.
   */
  fresh(asOf: number): Promise<boolean> {
    if (!this.listening) return FALSE;
    if (this.deps.db.kind !== 'postgres' || this.syncedAsOf >= asOf) return TRUE;
    return new Promise((resolve) => {
      this.waiting.add({ asOf, resolve });
      if (!this.syncing) this.sync();
    });
  }

  /** Every change committed before `asOf` has been applied: settles the requests that arrived before it. */
  private delivered(asOf: number): void {
    if (!this.listening || asOf <= this.syncedAsOf) return;
    this.syncedAsOf = asOf;
    for (const w of this.waiting)
      if (w.asOf <= asOf) {
        this.waiting.delete(w);
        w.resolve(true);
      }
  }

  private sync(): void {
    const client = this.listener.client;
    if (!client) {
      this.settleAll(false);
      return;
    }
    this.syncing = true;
    const startedAt = performance.now();
    // An empty query is the cheapest round trip (nothing to parse, plan or return): PostgreSQL still sends
    // every pending notification before its ReadyForQuery, and pg emits them before the query resolves.
    client.query('').then(
      () => {
        this.syncing = false;
        if (!this.listening || this.listener.client !== client) this.settleAll(false);
        else {
          this.delivered(startedAt);
          if (this.waiting.size) this.sync();
        }
      },
      () => {
        this.syncing = false;
        this.settleAll(false);
      },
    );
  }

  private settleAll(ok: boolean): void {
    for (const w of this.waiting) w.resolve(ok);
    this.waiting.clear();
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
