import { describe, expect } from 'vitest';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { appendEvents, waitUntil } from '../support/stream-client.ts';
import { seqsOf } from '../support/db-access.ts';
import { isDomainError } from '../../src/domain/errors.ts';
import { toGraphQLError } from '../../src/graphql/errors.ts';

/**
 * A slow consumer has a bounded queue (STREAM_MAX_PENDING): past it, it gets
 * what was queued, then `subscriber_too_slow` with the last seq queued, and
 * its listener is released; a consumer that keeps up is not delayed by it.
 */
const test = appTest({ config: { streamMaxPending: 5, eventStreamBatchMs: 0 } });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
// No batch window: each transaction arrives in its own pull, as the test below relies on.
test.beforeAll(({ app }) => void (t = app));

describe('backpressure', () => {
  test('a consumer that stops reading is ended past its queue with last_seq; the other keeps every event', async () => {
    const a = await buildTenant(t, ['events:read']);
    const slow = t.app.stream.subscribe(a.org.id, {});
    const fast = t.app.stream.subscribe(a.org.id, {});
    const fastSeen: number[] = [];
    // Both subscribers must be live before the appends: the first next() starts each one.
    const slowFirst = slow.next();
    const fastLoop = (async () => {
      for await (const e of fast) {
        fastSeen.push(e.seq);
        if (fastSeen.length === 12) break;
      }
    })();
    await waitUntil(() => t.app.stream.subscriberCount === 2, 'both listeners');
    // One transaction each: each arrives in its own pull, and the consumer that keeps up takes it before the next.
    const ids = await appendEvents(
      t.app,
      a.org.id,
      Array.from({ length: 12 }, () => ({})),
    );
    const seqs = await seqsOf(t.app, ids);
    await fastLoop;
    expect(fastSeen).toEqual(seqs);

    // The slow one: what was queued before the limit (the first event was taken by its pending next()), then the error.
    const got: number[] = [];
    let error: unknown;
    try {
      got.push((await slowFirst).value!.seq);
      for (;;) {
        const r = await slow.next();
        if (r.done) break;
        got.push(r.value.seq);
      }
    } catch (e) {
      error = e;
    }
    expect(got).toEqual(seqs.slice(0, got.length));
    expect(got.length).toBeGreaterThanOrEqual(5);
    expect(got.length).toBeLessThanOrEqual(7);
    expect(isDomainError(error) && error.code).toBe('subscriber_too_slow');
    const gql = toGraphQLError(error as never, 'req_x');
    expect(gql.extensions).toMatchObject({ code: 'subscriber_too_slow', last_seq: String(got.at(-1)) });
    await waitUntil(() => t.app.stream.subscriberCount === 0, 'both listeners released');
  });
});
