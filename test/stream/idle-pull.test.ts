import { describe, expect, vi } from 'vitest';
import { appTest, buildOrg, type TestApp } from '../support/kit.ts';
import { appendEvents, waitUntil } from '../support/stream-client.ts';
import { seqsOf } from '../support/db-access.ts';
import { streamPullStatement } from '../../src/domain/event/store.ts';

/**
 * A process with no subscriber reads nothing from the log when events are
 * sequenced: the wake-up's highest position moves the stream's cursor. A
 * subscriber that joins later still gets everything, once, in seq order: its
 * replay covers what was sequenced before it joined, the pull what came after.
 */
const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

describe('stream without subscribers', () => {
  test('sequenced batches cause no pull; later subscribers (from now, and from 0) miss nothing and see nothing twice', async () => {
    const org = await buildOrg(t);
    const rows = vi.spyOn(t.app.deps.db.sql, 'rows');
    const before: string[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        before.push(...(await appendEvents(t.app, org.id, [{}, {}])));
        await t.app.sequencer.flush();
      }
      expect(rows.mock.calls.filter(([statement]) => (statement as unknown) === streamPullStatement)).toEqual([]);
    } finally {
      rows.mockRestore();
    }
    const fromNow: string[] = [];
    const fromZero: string[] = [];
    const view = { key: 'seq', render: (e: { seq: number }) => String(e.seq) };
    const a = t.app.stream.subscribe(org.id, {
      view,
      sink: { write: (p: string, _s: string, done: () => void) => (fromNow.push(p), done()) },
    });
    const b = t.app.stream.subscribe(org.id, {
      startingAfter: 0n,
      view,
      sink: { write: (p: string, _s: string, done: () => void) => (fromZero.push(p), done()) },
    });
    const ends = [a.next(), b.next()];
    await waitUntil(() => t.app.stream.subscriberCount === 2, 'two subscribers');
    await waitUntil(
      () => fromZero.length === 10,
      () => `the replay (got ${fromZero})`,
    );
    const after = await appendEvents(t.app, org.id, [{}, {}, {}]);
    await t.app.sequencer.flush();
    const seqs = await seqsOf(t.app, [...before, ...after]);
    await waitUntil(
      () => fromZero.length === 13 && fromNow.length === 3,
      () => `live events (got ${fromNow} / ${fromZero})`,
    );
    expect(fromZero).toEqual(seqs.map(String));
    expect(fromNow).toEqual(seqs.slice(10).map(String));
    await Promise.all([a.return!(), b.return!()]);
    await Promise.all(ends);
  });
});
