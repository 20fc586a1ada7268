import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Deps } from '../../src/domain/context.ts';
import { retryDelayMs } from '../../src/domain/operation/engine.ts';

/** The operations engine's retry backoff (retryDelayMs in src/domain/operation/engine.ts): pure given its configuration. */
const withConfig = (retryBaseMs: number, retryMaxMs: number) =>
  ({ config: { operations: { retryBaseMs, retryMaxMs } } }) as unknown as Deps;

describe('retryDelayMs (operations)', () => {
  it('is base, 2×base, 4×base… from the first attempt on, never above the cap and without jitter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 1, max: 3_600_000 }),
        fc.integer({ min: 0, max: 40 }),
        (base, max, attempt) => {
          const d = retryDelayMs(withConfig(base, max), attempt);
          expect(d).toBe(Math.min(base * 2 ** Math.max(0, attempt - 1), max));
          expect(d).toBe(retryDelayMs(withConfig(base, max), attempt));
        },
      ),
    );
    expect([0, 1, 2, 3, 4].map((a) => retryDelayMs(withConfig(1000, 5000), a))).toEqual([1000, 1000, 2000, 4000, 5000]);
  });

  it('never shrinks from one attempt to the next', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60_000 }), fc.integer({ min: 1, max: 3_600_000 }), fc.nat(40), (base, max, attempt) => {
        const deps = withConfig(base, max);
        expect(retryDelayMs(deps, attempt)).toBeLessThanOrEqual(retryDelayMs(deps, attempt + 1));
      }),
    );
  });
});
