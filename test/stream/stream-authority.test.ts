import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { DomainError } from '../../src/domain/errors.ts';
import type { PlatformRequestHeaders, SurfaceBCaller } from '../../src/domain/platform/request-auth.ts';
import { StreamAuthority } from '../../src/runtime/stream-authority.ts';
import { waitUntil } from '../support/stream-client.ts';

/** The recheck policy alone, against a scripted gate (the transports are covered in access-ends.test.ts). */
function setup() {
  const refusals = new Map<string, DomainError | Error>();
  const calls: string[] = [];
  let invalidate = () => {};
  const gate = {
    authorize: async (h: PlatformRequestHeaders) => {
      calls.push(h.bearer ?? '');
      const refusal = refusals.get(h.bearer ?? '');
      if (refusal) throw refusal;
      return {} as SurfaceBCaller;
    },
  };
  const credentials = { subscribe: (fn: () => void) => (invalidate = fn) };
  const clock = new ManualClock();
  const authority = new StreamAuthority({ credentials: credentials as never, log: pino({ level: 'silent' }), clock }, gate, 3_600_000);
  const grant = (bearer: string, expiresAt: Date | null = null) => ({ headers: { bearer }, caller: { expiresAt } as SurfaceBCaller });
  return { authority, refusals, calls, invalidate: () => invalidate(), grant, clock };
}

describe('stream authority', () => {
  it('rechecks each distinct grant once per announcement and ends only the refused group, once per stream', async () => {
    const { authority, refusals, calls, invalidate, grant } = setup();
    const ended: string[] = [];
    for (const [bearer, n] of [
      ['a', 3],
      ['b', 2],
    ] as const) {
      for (let i = 0; i < n; i++) authority.watch(grant(bearer), (e) => ended.push(`${bearer}:${e.code}`));
    }
    refusals.set('a', new DomainError('invalid_token', 'revoked'));
    invalidate();
    invalidate(); // coalesced with the pass in flight: at most one more pass
    await waitUntil(() => ended.length === 3, 'the refused group to end');
    expect(ended).toEqual(['a:invalid_token', 'a:invalid_token', 'a:invalid_token']);
    await waitUntil(() => calls.length >= 2, 'the recheck');
    expect(new Set(calls)).toEqual(new Set(['a', 'b']));
    expect(calls.length).toBeLessThanOrEqual(4);
    expect(authority.size).toBe(2);
    invalidate();
    await waitUntil(() => calls.filter((c) => c === 'b').length >= 2, 'another recheck');
    expect(ended).toHaveLength(3);
    authority.stop();
  });

  it('keeps streams open when the recheck fails for a reason that does not prove access ended', async () => {
    const { authority, refusals, calls, invalidate, grant } = setup();
    const ended: string[] = [];
    authority.watch(grant('a'), (e) => ended.push(e.code));
    authority.watch(grant('b'), (e) => ended.push(e.code));
    refusals.set('a', new DomainError('service_unavailable', 'database down'));
    refusals.set('b', new Error('connection reset'));
    invalidate();
    await waitUntil(() => calls.length === 2, 'the recheck');
    await new Promise((r) => setImmediate(r));
    expect(ended).toEqual([]);
    expect(authority.size).toBe(2);
    authority.stop();
  });

  it('ends a stream at its token expiry without a recheck; unwatching releases the group', async () => {
    const { authority, calls, grant, clock } = setup();
    const ended: string[] = [];
    authority.watch(grant('a', new Date(clock.now().getTime() + 50)), (e) => ended.push(e.code));
    const unwatch = authority.watch(grant('b', new Date(clock.now().getTime() + 60_000)), (e) => ended.push(e.code));
    await waitUntil(() => ended.length === 1, 'the expiry');
    expect(ended).toEqual(['invalid_token']);
    expect(calls).toEqual([]);
    expect(authority.size).toBe(1);
    unwatch();
    expect(authority.size).toBe(0);
    authority.stop();
  });
});
