import { setTimeout as sleep } from 'node:timers/promises';
import type { Payout } from '../../db/generated/client.ts';
import type { Deps } from '../context.ts';

/**
 * The payout provider adapter (ADR 0009): what a payout run asks of the
 * provider that moves the money. Calls are made outside any transaction and
 * are idempotent per payout id (a resumed run repeats the call it was making
 * when its worker died). A provider may settle or refuse a payout at once, or
 * accept it and hold it for a manual review: the payout is then `in_review`
 * (still in flight, its hold kept) and the run asks `review` again until the
 * provider has decided, at the time the provider said, or at the operations
 * recheck when it said none.
 */
export type PayoutDecision = { state: 'settled' } | { state: 'failed'; reason: string };
/** Held for review: `until`, when the provider expects to have decided (the run asks again then; else at the recheck). */
export type ReviewResult = PayoutDecision | { state: 'review'; until?: Date };
export type PayResult = ReviewResult;

export interface PayoutProvider {
  name: string;
  pay(deps: Deps, payout: Payout): Promise<PayResult>;
  /** The decision on a payout the provider holds for review (`in_review`), or when to ask again. */
  review(deps: Deps, payout: Payout): Promise<ReviewResult>;
}

export const DEFAULT_REVIEW_MS = 60_000;

/**
 * `sandbox`, driven by `PayoutsConfig.sandbox`: succeed, fail or review every payout (or only `failEntities` /
 * `reviewEntities`), each call taking `delayMs`. A held payout is decided `review.afterMs` of the injected clock
 * after it entered review (its `updated_at`: nothing else writes an in-review payout), settled or failed as
 * `review.outcome` says, so tests resolve a review by moving the clock.
 */
export const sandboxPayoutProvider: PayoutProvider = {
  name: 'sandbox',
  async pay(deps, p) {
    const c = deps.config.payouts?.sandbox ?? {};
    if (c.delayMs) await sleep(c.delayMs);
    if (c.outcome === 'fail' || c.failEntities?.includes(p.entityId))
      return { state: 'failed', reason: 'sandbox: the provider refused the payment' };
    if (c.outcome === 'review' || c.reviewEntities?.includes(p.entityId))
      return { state: 'review', until: new Date(deps.clock.now().getTime() + (c.review?.afterMs ?? DEFAULT_REVIEW_MS)) };
    return { state: 'settled' };
  },
  async review(deps, p) {
    const r = deps.config.payouts?.sandbox?.review ?? {};
    const until = new Date(p.updatedAt.getTime() + (r.afterMs ?? DEFAULT_REVIEW_MS));
    if (deps.clock.now() < until) return { state: 'review', until };
    return r.outcome === 'fail'
      ? { state: 'failed', reason: 'sandbox: the provider refused the payment after review' }
      : { state: 'settled' };
  },
};
