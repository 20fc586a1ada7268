import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.ts';
import { requestCost, TokenBuckets } from '../../src/domain/platform/rate-limit.ts';

/** The request rate limit's token bucket and cost rule (src/domain/platform/rate-limit.ts). */
function buckets(perSecond: number, burst: number) {
  let now = 0;
  const set = new TokenBuckets('test', perSecond, burst, () => now);
  // The bucket arithmetic, synchronously (what `take` runs in a process that keeps its own buckets).
  const b = { take: (key: string, cost = 1) => TokenBuckets.takeAllHere(cost, [[set, key]]) };
  return { b, advance: (ms: number) => void (now += ms) };
}

const refused = (f: () => unknown): DomainError => {
  try {
    f();
  } catch (err) {
    return err as DomainError;
  }
  throw new Error('expected rate_limited');
};

describe('TokenBuckets', () => {
  it('a fresh key admits exactly `burst` unit requests at one instant, then rate_limited with retry_after ≥ 1 s', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 20 }), (burst, perSecond) => {
        const { b } = buckets(perSecond, burst);
        for (let i = 0; i < burst; i++) expect(b.take('k').remaining).toBe(burst - i - 1);
        const err = refused(() => b.take('k'));
        expect(err).toBeInstanceOf(DomainError);
        expect(err.code).toBe('rate_limited');
        expect(err.details.retry_after).toBeGreaterThanOrEqual(1);
        expect(err.details.limit).toBe(burst);
      }),
    );
  });

  it('refills at perSecond up to burst, never beyond', () => {
    const { b, advance } = buckets(2, 4);
    for (let i = 0; i < 4; i++) b.take('k');
    advance(1000);
    expect(b.take('k').remaining).toBe(1); // 2 refilled, 1 taken
    advance(3_600_000);
    expect(b.take('k').remaining).toBe(3); // capped at burst 4
  });

  it('keys are independent and a refused request spends nothing', () => {
    const { b, advance } = buckets(1, 2);
    b.take('a', 2);
    refused(() => b.take('a'));
    expect(b.take('b').remaining).toBe(1);
    advance(1000);
    expect(b.take('a').remaining).toBe(0);
  });

  it('a cost above what is left is refused and retry_after covers the shortfall', () => {
    const { b } = buckets(1, 5);
    b.take('k', 3);
    const err = refused(() => b.take('k', 5));
    expect(err.details.retry_after).toBe(3);
  });

  it('over any schedule, admitted cost never exceeds burst + perSecond × elapsed', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 1, max: 3 })), { maxLength: 200 }), (steps) => {
        const { b, advance } = buckets(3, 10);
        let elapsed = 0;
        let admitted = 0;
        for (const [ms, cost] of steps) {
          advance(ms);
          elapsed += ms;
          try {
            b.take('k', cost);
            admitted += cost;
          } catch {
            /* refused */
          }
          expect(admitted).toBeLessThanOrEqual(10 + (3 * elapsed) / 1000 + 1e-9);
        }
      }),
    );
  });
});

describe('requestCost', () => {
  it('is 1 up to 100 list items, then 1 more per started 100', () => {
    expect([0, 1, 100, 101, 200, 201, 3000].map(requestCost)).toEqual([1, 1, 1, 2, 2, 3, 30]);
    fc.assert(
      fc.property(
        fc.nat(1e6),
        fc.nat(1e6),
        (a, b) => void expect(requestCost(Math.min(a, b))).toBeLessThanOrEqual(requestCost(Math.max(a, b))),
      ),
    );
  });
});
