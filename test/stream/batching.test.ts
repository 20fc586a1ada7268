import { describe, expect } from 'vitest';
import { appendEvents, countingSubscriber, waitUntil } from '../support/stream-client.ts';
import { seqsOf } from '../support/db-access.ts';
import { appTest, buildOrg } from '../support/kit.ts';

/**
 * EVENT_STREAM_BATCH_MS: a busy stream pulls at most once per window, so the
 * events sequenced meanwhile go out together (one corked write per socket),
 * in order and none lost.
 */
const test = appTest({ config: { eventStreamBatchMs: 2000, eventStreamBatchSubscribers: 1 } });

describe('stream batching', () => {
  test('events sequenced one by one inside the window are pulled together, every one delivered in order', async ({ app: t }) => {
    const org = await buildOrg(t);
    const { got, pulls, close } = await countingSubscriber(t.app, org.id, 'batch');
    try {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        ids.push(...(await appendEvents(t.app, org.id, [{}])));
        await t.app.sequencer.flush(); // each one sequenced (and the stream woken) before the next
      }
      const seqs = await seqsOf(t.app, ids);
      await waitUntil(
        () => got.length === 6,
        () => `six events (got ${got})`,
      );
      expect(got).toEqual(seqs.map(String));
      // Without the window each wake-up would pull (six or more); with it, one at once and one per window after.
      expect(pulls()).toBeLessThanOrEqual(3);
    } finally {
      await close();
    }
  });
});
