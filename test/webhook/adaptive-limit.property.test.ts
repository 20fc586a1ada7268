import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AdaptiveLimit, congestion } from '../../src/domain/webhook/concurrency.ts';

/** Properties of the adaptive per-endpoint concurrency policy (src/domain/webhook/concurrency.ts); the examples are in adaptive-limit.test.ts, the behaviour over HTTP in test/webhook/concurrency.test.ts. */
const outcome = fc.oneof(
  fc.record({
    ok: fc.constant(true),
    statusCode: fc.constant(200),
    error: fc.constant(null),
    durationMs: fc.integer({ min: 1, max: 5000 }),
  }),
  fc.record({
    ok: fc.constant(false),
    statusCode: fc.constantFrom(400, 404, 429, 500, 503),
    error: fc.constant(null),
    durationMs: fc.integer({ min: 1, max: 5000 }),
  }),
  fc.record({
    ok: fc.constant(false),
    statusCode: fc.constant(null),
    error: fc.constantFrom('timeout', 'ECONNREFUSED', 'destination_refused: private'),
    durationMs: fc.integer({ min: 1, max: 5000 }),
  }),
);

describe('AdaptiveLimit', () => {
  it('the limit stays within 1..ceiling and in-flight counts every started attempt until it finishes, whatever the outcomes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 32 }),
        fc.integer({ min: 1, max: 64 }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 8 }), outcome), { maxLength: 100 }),
        (initial, ceiling, rounds) => {
          const l = new AdaptiveLimit({ initial, ceiling });
          expect(l.limit).toBe(Math.max(1, Math.min(initial, ceiling)));
          let now = 0;
          for (const [n, o] of rounds) {
            const tokens = Array.from({ length: n }, () => l.start(now++));
            expect(l.inFlight).toBe(n);
            for (const tk of tokens) l.finish(tk, o);
            expect(l.inFlight).toBe(0);
            expect(l.limit).toBeGreaterThanOrEqual(1);
            expect(l.limit).toBeLessThanOrEqual(ceiling);
            expect(l.free(now)).toBe(l.limit);
          }
        },
      ),
    );
  });

  it("an endpoint's max_in_flight caps the limit whatever the outcomes, set before the first attempt or later", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 50 }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 8 }), outcome), { maxLength: 100 }),
        (maxInFlight, configureAfter, rounds) => {
          const l = new AdaptiveLimit({ initial: 4, ceiling: 64 });
          let now = 0;
          for (const [i, [n, o]] of rounds.entries()) {
            if (i === configureAfter) l.configure({ max_in_flight: maxInFlight }, now);
            const started = Array.from({ length: Math.max(0, Math.min(n, l.free(now))) }, () => l.start(now++));
            for (const tk of started) l.finish(tk, o);
            if (i >= configureAfter) expect(l.limit).toBeLessThanOrEqual(maxInFlight);
          }
        },
      ),
    );
  });

  it('a rate limit grants its burst at once, then one slot per 1/rate seconds; removing it lifts the pacing', () => {
    const l = new AdaptiveLimit({ initial: 64, ceiling: 64 });
    l.configure({ rate_limit_per_second: 5 }, 0);
    expect(l.free(0)).toBe(5);
    for (let i = 0; i < 5; i++) l.finish(l.start(0), { ok: true, statusCode: 200, error: null, durationMs: 1 });
    expect(l.free(0)).toBe(0);
    expect(l.paced(0)).toBe(true);
    expect(l.free(199)).toBe(0);
    expect(l.free(200)).toBe(1);
    expect(l.free(10_000)).toBe(5); // never more than the burst
    l.configure(null, 10_000);
    expect(l.free(10_000)).toBe(64);
  });

  it('a burst of overload answers that were in flight together shrinks the limit once, not once per answer', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 20 }), fc.constantFrom(429, 500, 503), (n, statusCode) => {
        const l = new AdaptiveLimit({ initial: 16, ceiling: 64 });
        const tokens = Array.from({ length: n }, (_, i) => l.start(i));
        for (const tk of tokens) l.finish(tk, { ok: false, statusCode, error: null, durationMs: 5 });
        expect(l.limit).toBe(8);
      }),
    );
  });

  it('answers that say nothing about load (4xx other than 429, refused destinations) never move the limit', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.constantFrom(400, 401, 404, 410, 422).map((statusCode) => ({ statusCode, error: null })),
            fc.constant({ statusCode: null, error: 'destination_refused: loopback' }),
          ),
          { maxLength: 50 },
        ),
        (answers) => {
          const l = new AdaptiveLimit({ initial: 6, ceiling: 64 });
          for (const a of answers) l.finish(l.start(0), { ok: false, durationMs: 5, ...a });
          expect(l.limit).toBe(6);
        },
      ),
    );
  });
});

describe('congestion', () => {
  it('classifies outcomes: success, overload (429, 5xx, no answer) or no signal', () => {
    expect(congestion({ ok: true, statusCode: 200, error: null })).toBe('success');
    for (const statusCode of [429, 500, 502, 599]) expect(congestion({ ok: false, statusCode, error: null })).toBe('overload');
    expect(congestion({ ok: false, statusCode: null, error: 'timeout' })).toBe('overload');
    for (const statusCode of [300, 400, 404, 499]) expect(congestion({ ok: false, statusCode, error: null })).toBe('none');
    expect(congestion({ ok: false, statusCode: null, error: 'destination_refused: private address' })).toBe('none');
  });
});
