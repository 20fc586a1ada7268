import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../packages/client/src/retry.ts';

describe('parseRetryAfter (RFC 9110: delta-seconds or an HTTP date)', () => {
  const now = Date.parse('2026-11-25T12:00:00Z');
  it.for([
    ['120', 120_000],
    [' 5 ', 5000],
    ['0', 0],
    ['2026', 2_026_000],
    ['Wed, 25 Nov 2026 12:01:30 GMT', 90_000],
    ['Wed, 25 Nov 2026 11:00:00 GMT', 0], // a date in the past: retry now (then clamped by the caller)
  ] as const)('%s → %s ms', ([value, ms]) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
  it.for(['', '-1', '1.5', 'soon', '12345678901', 'Nov 2026', undefined])('%s is ignored', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});
