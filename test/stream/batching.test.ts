import { describe, expect } from 'vitest';
import { appendEvents, seqsOf, waitUntil } from '../support/stream-client.ts';
import { streamPullStatement } from '../../src/domain/event/event.ts';
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
    const got: string[] = [];
    const sub = t.app.stream.subscribe(org.id, {
      view: { key: 'batch', render: (e) => String(e.seq) },
      sink: { write: (p, _seq, done) => (got.push(p), done()) },
    });
    const end = sub.next();
    await waitUntil(() => t.app.stream.subscriberCount === 1, 'the subscriber');
    const sql = t.app.deps.db.sql;
    const rows = sql.rows.bind(sql);
    let pulls = 0;
    sql.rows = ((statement, params) => {
      if ((statement as unknown) === streamPullStatement) pulls++;
      return rows(statement, params);
    }) as typeof sql.rows;
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
      expect(pulls).toBeLessThanOrEqual(3);
    } finally {
      sql.rows = rows;
      await sub.return!();
      await end;
    }
  });
});
