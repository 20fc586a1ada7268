import { describe, expect } from 'vitest';
import { maxPosition } from '../../src/domain/event/store.ts';
import { appTest, buildOrg } from '../support/kit.ts';
import { appendEvents, countingSubscriber, waitUntil } from '../support/stream-client.ts';
import { seqsOf } from '../support/db-access.ts';

/**
 * What this process sequences reaches its own subscribers without a read of the stream's own: the sequencer's
 * transaction reads past the stream's cursor for it (the batch included), handed over after the commit.
 *
 * A wake-up names how far the log is sequenced (a NOTIFY's payload, the sequencer's batch in its own process). The
 * process that sequenced a batch pulls it at once and then hears its own NOTIFY for the same batch: a wake-up at or
 * below what the stream has read starts no read (numbers become visible in order, so nothing can be missing below
 * it); one past it reads.
 */
// No periodic poll: the only reads are the ones the test causes.
const test = appTest({ config: { eventStreamPollMs: 3_600_000 } });

/** Neither reading nor waiting out its batch window (a NOTIFY that raced the first read may have queued one more). */
const settled = (stream: { atRest: boolean }) => stream.atRest;

describe('the stream and the sequencer of its process', () => {
  test('batches sequenced here reach the subscriber in seq order without a read of the stream itself', async ({ app: t }) => {
    const org = await buildOrg(t);
    const { got, pulls, reads, close } = await countingSubscriber(t.app, org.id, 'here');
    try {
      const ids: string[] = [];
      // One event at a time, each sequenced while the stream is at rest (not reading, not waiting out a window).
      const one = async () => {
        ids.push(...(await appendEvents(t.app, org.id, [{}])));
        await t.app.sequencer.flush();
        await waitUntil(
          () => got.length === ids.length,
          () => `event ${ids.length} (got ${got})`,
        );
        await waitUntil(() => settled(t.app.stream), 'the stream at rest');
      };
      await one();
      const [pulls0, reads0] = [pulls(), reads()];
      for (let i = 0; i < 3; i++) await one();
      expect(got).toEqual((await seqsOf(t.app, ids)).map(String));
      expect(reads() - reads0).toBe(0);
      expect(pulls() - pulls0).toBe(3);
    } finally {
      await close();
    }
  });

  test('a wake-up for what was already read starts no pull; one past it does', async ({ app: t }) => {
    const org = await buildOrg(t);
    const { got, pulls, close } = await countingSubscriber(t.app, org.id, 'wake');
    try {
      await appendEvents(t.app, org.id, [{}]);
      await t.app.sequencer.flush();
      await waitUntil(() => got.length === 1, 'the first event');
      await waitUntil(() => settled(t.app.stream), 'the stream at rest');
      const max = (await maxPosition(t.app.deps.db.sql))!;
      const before = pulls();
      t.app.stream.pull(BigInt(max));
      t.app.stream.pull(BigInt(max) - 1n);
      expect(pulls()).toBe(before);
      // Past the cursor: read at once (nothing new is there yet, so nothing is delivered).
      t.app.stream.pull(BigInt(max) + 1n);
      expect(pulls()).toBe(before + 1);
      await appendEvents(t.app, org.id, [{}]);
      await t.app.sequencer.flush();
      await waitUntil(() => got.length === 2, 'the second event');
    } finally {
      await close();
    }
  });
});
