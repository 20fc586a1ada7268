import type { RateLimit } from '../../config.ts';
import type { Deps } from '../context.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { TokenBuckets } from '../platform/rate-limit.ts';
import { hashSecret } from '../secret.ts';

/** The client's address key (src/http/client-address.ts `requestKey`), computed only when needed. */
export type ClientKey = () => string;

/**
 * Runs one authentication through the process's throttle (a one-off command has none). The presented secret is hashed
 * once, here: the throttle and the lookup both key on the hash.
 */
export function authenticateFrom<T>(
  deps: Pick<Deps, 'failedAuthentication'>,
  client: ClientKey | undefined,
  presented: string,
  authenticate: (hash: string) => Promise<T>,
): Promise<T> {
  const hash = hashSecret(presented);
  return deps.failedAuthentication ? deps.failedAuthentication.guard(client, hash, authenticate) : authenticate(hash);
}

/** How long a key that authenticated stays vouched for: a client that used it within the hour is never throttled with it. */
const VOUCHED_MS = 60 * 60_000;
const MAX_VOUCHED = 100_000;

/**
 * Failed-authentication throttling per client address (docs/security.md,
 * "Abuse limits"). Every front's authentication (platform keys on every
 * surface, user tokens, the operator token, publishable keys) runs through
 * `guard`:
 *
 * - While the address's bucket holds a token, the key is checked as usual;
 *   a failure (401 `invalid_token`) spends one.
 * - Once it is empty, a key is checked only if it authenticated in this
 *   process within the hour (its hash is vouched for, in memory); any other
 *   answers 429 `rate_limited` without a lookup. So a valid key in use is
 *   never throttled, and an attacker at that address learns nothing about
 *   new guesses faster than the bucket refills. Keys this process issues are
 *   vouched for at once. (The price: a valid key this process has neither
 *   issued nor seen succeed waits for the bucket like a guess would.)
 */
export class FailedAuthentication {
  private readonly buckets: TokenBuckets;
  private readonly limit: { burst: number };
  /** Hash of a key that authenticated → until when it is vouched for (Map order: oldest first). */
  private readonly vouched = new Map<string, number>();

  constructor(
    limit: RateLimit,
    private readonly now: () => number,
  ) {
    this.buckets = new TokenBuckets('failed authentication', limit.perSecond, limit.burst, now, 'address');
    this.limit = limit;
  }

  /** `hash`: the presented secret's (`hashSecret`). */
  async guard<T>(client: ClientKey | undefined, hash: string, authenticate: (hash: string) => Promise<T>): Promise<T> {
    if (!client) return authenticate(hash);
    // No address has failed yet (the common case): no key to compute, nothing to look up.
    const address = this.buckets.empty ? undefined : client();
    const wait = address === undefined ? 0 : await this.buckets.wait(address);
    if (wait > 0 && !this.isVouched(hash)) {
      // `limit` makes the answer carry RateLimit-* like every other 429 (the OpenAPI documents require them).
      throw new DomainError('rate_limited', `Too many failed authentications from this address; retry after ${wait} s`, null, {
        retry_after: wait,
        limit: this.limit.burst,
      });
    }
    try {
      const caller = await authenticate(hash);
      this.vouch(hash);
      return caller;
    } catch (e) {
      if (isDomainError(e) && e.code === 'invalid_token') await this.buckets.spend(address ?? client());
      throw e;
    }
  }

  /** A key just issued by this process is known good before its first use (if its transaction rolls back, it merely gets checked). */
  issued(secret: string): void {
    this.vouch(hashSecret(secret));
  }

  private isVouched(hash: string): boolean {
    const until = this.vouched.get(hash);
    return until !== undefined && until > this.now();
  }

  private vouch(hash: string): void {
    const until = this.vouched.get(hash);
    if (until !== undefined && until - VOUCHED_MS > this.now() - 60_000) return; // renewed within the minute: enough
    this.vouched.delete(hash); // re-inserted last: the Map stays ordered by expiry
    this.vouched.set(hash, this.now() + VOUCHED_MS);
    if (this.vouched.size > MAX_VOUCHED) this.vouched.delete(this.vouched.keys().next().value!);
  }
}
