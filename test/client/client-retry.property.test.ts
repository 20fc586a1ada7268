import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRetryAfter, retryDelayMs, shouldRetry, type AttemptOutcome, type RetryPolicy } from '../../packages/client/src/retry.ts';

/** The client library's retry policy (packages/client/src/retry.ts): pure, so checked without a server. */
const policy = fc.record({
  maxRetries: fc.integer({ min: 0, max: 10 }),
  initialDelayMs: fc.integer({ min: 1, max: 10_000 }),
  maxDelayMs: fc.integer({ min: 1, max: 120_000 }),
});
const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const outcome: fc.Arbitrary<AttemptOutcome> = fc.oneof(
  fc.constant<AttemptOutcome>({ kind: 'network' }),
  fc.integer({ min: 200, max: 599 }).map((status): AttemptOutcome => ({ kind: 'response', status })),
);

describe('shouldRetry', () => {
  it('never retries once the attempts allowed by the policy are spent', () => {
    fc.assert(
      fc.property(outcome, fc.boolean(), policy, fc.nat(5), (o, replayable, p, extra) => {
        expect(shouldRetry(o, replayable, p.maxRetries + extra, p)).toBe(false);
      }),
    );
  });

  it('retries 429 always, and 5xx or a network failure only when the request is replayable; nothing else', () => {
    fc.assert(
      fc.property(outcome, fc.boolean(), policy, (o, replayable, p) => {
        fc.pre(p.maxRetries > 0);
        const attempt = p.maxRetries - 1;
        const want = o.kind === 'network' ? replayable : o.status === 429 || (o.status >= 500 && replayable);
        expect(shouldRetry(o, replayable, attempt, p)).toBe(want);
      }),
    );
  });
});

describe('retryDelayMs', () => {
  it('without Retry-After: between half and all of the exponential backoff, capped at maxDelayMs', () => {
    fc.assert(
      fc.property(fc.nat(20), policy, unit, (attempt, p: RetryPolicy, r) => {
        const backoff = Math.min(p.initialDelayMs * 2 ** attempt, p.maxDelayMs);
        const d = retryDelayMs(attempt, undefined, p, () => r);
        expect(Number.isInteger(d)).toBe(true);
        expect(d).toBeGreaterThanOrEqual(Math.floor(backoff * 0.5));
        expect(d).toBeLessThanOrEqual(Math.min(backoff, p.maxDelayMs));
      }),
    );
  });

  it('grows with the random draw and never shrinks from one attempt to the next', () => {
    fc.assert(
      fc.property(fc.nat(20), policy, unit, unit, (attempt, p, a, b) => {
        const [lo, hi] = [Math.min(a, b), Math.max(a, b)];
        expect(retryDelayMs(attempt, undefined, p, () => lo)).toBeLessThanOrEqual(retryDelayMs(attempt, undefined, p, () => hi));
        expect(retryDelayMs(attempt, undefined, p, () => a)).toBeLessThanOrEqual(retryDelayMs(attempt + 1, undefined, p, () => a));
      }),
    );
  });

  it('Retry-After wins over the backoff, clamped to maxDelayMs, without jitter', () => {
    fc.assert(
      fc.property(fc.nat(20), fc.integer({ min: 0, max: 3_600_000 }), policy, unit, (attempt, after, p, r) => {
        expect(retryDelayMs(attempt, after, p, () => r)).toBe(Math.min(after, p.maxDelayMs));
      }),
    );
  });
});

describe('parseRetryAfter', () => {
  const NOW = Date.parse('2030-01-01T00:00:00Z');

  it('reads delta-seconds as ms; a negative number is not delta-seconds and is ignored', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 86_400 }), (s) => {
        expect(parseRetryAfter(String(s), NOW)).toBe(s < 0 ? undefined : s * 1000);
      }),
    );
  });

  it('reads an HTTP date as the ms until it, 0 when past', () => {
    fc.assert(
      fc.property(fc.integer({ min: -86_400, max: 86_400 }), (s) => {
        const header = new Date(NOW + s * 1000).toUTCString();
        expect(parseRetryAfter(header, NOW)).toBe(Math.max(0, s * 1000));
      }),
    );
  });

  it('is undefined when absent, blank or unreadable', () => {
    for (const header of [null, undefined, '', '   ', 'soon', '1.5', 'Mon, 99 Foo 2030'])
      expect(parseRetryAfter(header, NOW)).toBeUndefined();
  });
});
