import { describe, expect } from 'vitest';
import { appTest, buildOrg } from '../support/kit.ts';
import { appendEvents, countingSubscriber, waitUntil } from '../support/stream-client.ts';
import { seqsOf } from '../support/db-access.ts';

/**
 * The batch window scales with the subscribers (EVENT_STREAM_BATCH_SUBSCRIBERS): batching saves a socket write per
 * subscriber per event, worth its latency only with many sockets. One subscriber of a 1,000-subscriber scale waits a
 * thousandth of a 5 s window, so a busy stream still hands it each event long before the window would have ended.
 */
const test = appTest({ config: { eventStreamBatchMs: 5000, eventStreamBatchSubscribers: 1000 } });

describe('stream batching with few subscribers', () => {
  test('events sequenced one by one each reach the lone subscriber before the next is written, each by its own pull', async ({
    app: t,
  }) => {
    const org = await buildOrg(t);
    const { got, pulls, close } = await countingSubscriber(t.app, org.id, 'few');
    try {
      const ids: string[] = [];
      for (let i = 1; i <= 4; i++) {
        ids.push(...(await appendEvents(t.app, org.id, [{}])));
        await t.app.sequencer.flush();
        // The whole window would be 5 s: each event arriving well within it was pulled without waiting for it.
        await waitUntil(
          () => got.length === i,
          () => `event ${i} (got ${got})`,
          2500,
        );
      }
      expect(got).toEqual((await seqsOf(t.app, ids)).map(String));
      expect(pulls()).toBeGreaterThanOrEqual(4);
    } finally {
      await close();
    }
  });
});
