import { describe, expect, it } from 'vitest';
import { AdaptiveLimit } from '../../src/domain/webhook/concurrency.ts';

/** Examples of the adaptive per-endpoint concurrency policy (src/domain/webhook/concurrency.ts); its properties are in adaptive-limit.property.test.ts. */
const ok = (durationMs: number) => ({ ok: true, statusCode: 200, error: null, durationMs });
const overloaded = { ok: false, statusCode: 503, error: 'HTTP 503', durationMs: 1 };

describe('the adaptive limit of one endpoint', () => {
  it('grows on fast successes while it is used, up to the ceiling and never past it', () => {
    const l = new AdaptiveLimit({ initial: 4, ceiling: 10 });
    for (let i = 0; i < 200; i++) {
      const tokens = Array.from({ length: l.limit }, () => l.start(0));
      for (const t of tokens) l.finish(t, ok(2));
      expect(l.limit).toBeLessThanOrEqual(10);
    }
    expect(l.limit).toBe(10);
  });

  it('does not grow while mostly idle', () => {
    const l = new AdaptiveLimit({ initial: 4, ceiling: 64 });
    for (let i = 0; i < 100; i++) l.finish(l.start(0), ok(2));
    expect(l.limit).toBe(4);
  });

  it('halves once for a burst of overloaded answers that were in flight together, then again for later ones', () => {
    const l = new AdaptiveLimit({ initial: 16, ceiling: 64 });
    const burst = Array.from({ length: 16 }, () => l.start(0));
    for (const t of burst) l.finish(t, overloaded);
    expect(l.limit).toBe(8);
    l.finish(l.start(0), overloaded);
    expect(l.limit).toBe(4);
    for (let i = 0; i < 10; i++) l.finish(l.start(0), { ok: false, statusCode: null, error: 'timeout after 15000 ms', durationMs: 15000 });
    expect(l.limit).toBe(1);
  });

  it('shrinks when answers get much slower than the baseline; 4xx and refused destinations say nothing about load', () => {
    const l = new AdaptiveLimit({ initial: 10, ceiling: 64 });
    for (let i = 0; i < 20; i++) l.finish(l.start(0), ok(3));
    const before = l.limit;
    l.finish(l.start(0), ok(400)); // one stall is not a signal
    expect(l.limit).toBe(before);
    for (let i = 0; i < 10; i++) l.finish(l.start(0), ok(400));
    expect(l.limit).toBeLessThan(before);
    const after = l.limit;
    l.finish(l.start(0), { ok: false, statusCode: 404, error: 'HTTP 404', durationMs: 2 });
    l.finish(l.start(0), { ok: false, statusCode: null, error: 'destination_refused: x resolves to a private address', durationMs: 0 });
    expect(l.limit).toBe(after);
  });
});
