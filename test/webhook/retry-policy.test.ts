import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextState, withJitter } from '../../src/domain/webhook/lease.ts';
import type { AttemptOutcome } from '../../src/domain/webhook/send.ts';

/** The webhook retry policy (src/domain/webhook/lease.ts): pure, so checked without a server. */
const NOW = new Date('2030-01-01T00:00:00Z');
const SCHEDULE = [60_000, 300_000, 1_800_000];
const fail: AttemptOutcome = { ok: false, statusCode: 500, error: null, excerpt: null, durationMs: 5 };
const ok: AttemptOutcome = { ok: true, statusCode: 200, error: null, excerpt: null, durationMs: 5 };
const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('withJitter', () => {
  it('stays within ±10 % of the delay, rounded to whole ms', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 7 * 86_400_000 }), unit, (delay, r) => {
        const j = withJitter(delay, () => r);
        expect(Number.isInteger(j)).toBe(true);
        expect(j).toBeGreaterThanOrEqual(Math.floor(delay * 0.9));
        expect(j).toBeLessThanOrEqual(Math.ceil(delay * 1.1));
      }),
    );
  });

  it('is the delay itself at the middle of the range and grows with the random draw', () => {
    expect(withJitter(1000, () => 0.5)).toBe(1000);
    expect(withJitter(1000, () => 0)).toBe(900);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1e9 }),
        unit,
        unit,
        (delay, a, b) => void expect(withJitter(delay, () => Math.min(a, b))).toBeLessThanOrEqual(withJitter(delay, () => Math.max(a, b))),
      ),
    );
  });
});

describe('nextState', () => {
  it('a successful attempt is succeeded with nothing due, whatever the count', () => {
    fc.assert(
      fc.property(
        fc.nat(10),
        (made) => void expect(nextState(ok, made, SCHEDULE, NOW)).toEqual({ status: 'succeeded', nextAttemptAt: null }),
      ),
    );
  });

  it('a failed attempt before the schedule runs out is failing, due after that step of the schedule (jittered)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: SCHEDULE.length - 1 }), unit, (made, r) => {
        const s = nextState(fail, made, SCHEDULE, NOW, () => r);
        expect(s.status).toBe('failing');
        expect(s.nextAttemptAt!.getTime() - NOW.getTime()).toBe(withJitter(SCHEDULE[made]!, () => r));
      }),
    );
  });

  it('a failed attempt after the last scheduled one is exhausted with nothing due', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: SCHEDULE.length, max: 50 }),
        (made) => void expect(nextState(fail, made, SCHEDULE, NOW)).toEqual({ status: 'exhausted', nextAttemptAt: null }),
      ),
    );
    expect(nextState(fail, 0, [], NOW)).toEqual({ status: 'exhausted', nextAttemptAt: null });
  });

  it('a timeout or a refused destination counts as a failure like a 5xx', () => {
    for (const outcome of <AttemptOutcome[]>[
      { ...fail, statusCode: null, error: 'timeout' },
      { ...fail, statusCode: null, error: 'destination_refused: private address' },
      { ...fail, statusCode: 404 },
    ]) {
      expect(nextState(outcome, 0, SCHEDULE, NOW, () => 0.5)).toEqual({
        status: 'failing',
        nextAttemptAt: new Date(NOW.getTime() + SCHEDULE[0]!),
      });
    }
  });
});
