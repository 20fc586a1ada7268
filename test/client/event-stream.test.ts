import { describe, expect } from 'vitest';
import { streamEvents, type WireEvent } from '../../packages/client/src/cli/event-stream.ts';
import { appendEvents, waitUntil } from '../support/stream-client.ts';
import { seqsOf } from '../support/db-access.ts';
import { appTest, buildTenant } from '../support/kit.ts';

/**
 * The CLI's stream (`platform events tail`, `platform listen`) resumes a
 * subscription the server ended as resumable from the last seq it saw. Here
 * the server's queue per subscriber is 1 event, so a burst committed in one
 * transaction ends the subscription with subscriber_too_slow at once.
 */
const test = appTest({ config: { streamMaxPending: 1 } });

describe('CLI event stream', () => {
  test('resumes after subscriber_too_slow from the last seq seen: every event once, in order', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const got: WireEvent[] = [];
    let connects = 0;
    const stream = streamEvents({ origin: t.origin, apiKey: a.token, onConnected: () => connects++ }, (e) => {
      got.push(e);
    });
    let failure: unknown;
    stream.done.catch((e) => (failure = e));
    await waitUntil(() => t.app.stream.subscriberCount === 1, 'the subscription');
    const ids = await appendEvents(
      t.app,
      a.org.id,
      Array.from({ length: 6 }, () => ({})),
      { oneTransaction: true },
    );
    const seqs = await seqsOf(t.app, ids);
    await waitUntil(
      () => got.length >= 6 || failure !== undefined,
      () => `six events (got ${got.map((e) => e.seq)}; ${String(failure)})`,
    );
    expect(failure).toBeUndefined();
    expect(got.map((e) => e.seq)).toEqual(seqs);
    expect(connects).toBeGreaterThanOrEqual(2); // it was ended and came back
    stream.close();
    await stream.done;
  });

  test('a revoked token ends the stream with invalid_token instead of resuming', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const stream = streamEvents({ origin: t.origin, apiKey: a.token }, () => {});
    const settled = stream.done.then(
      () => 'ended',
      (e: { code?: string }) => e.code,
    );
    await waitUntil(() => t.app.stream.subscriberCount >= 1, 'the subscription');
    await t.http.post('/platform/tokens/revoke', { token_id: a.tokenId }, { token: a.org.userToken });
    expect(await settled).toBe('invalid_token');
  });
});
