import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { appendEvent } from '../../src/domain/event/event.ts';
import { SseSubscription, waitUntil } from '../support/stream-client.ts';
import { appTest, type TestApp, buildTenant } from '../support/kit.ts';
import { insertEventRow, seqsInLog } from '../support/db-access.ts';

/** `seq` is dense and gapless per organization (ADR 0005), still equal to commit order within it. */
const test = appTest();
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const WRITERS = 4;
const PER_WRITER = 15;

/** Every seq the organization's log holds (public and internal events), in seq order. */
const logSeqs = (organizationId: string) => seqsInLog(t, organizationId);

/** Tails the REST feed with starting_after until `done()` and `n` events were seen. */
async function tail(token: string, n: number, done: () => boolean): Promise<{ id: string; seq: number }[]> {
  const seen: { id: string; seq: number }[] = [];
  let cursor = 0;
  const deadline = Date.now() + 25_000;
  while (Date.now() < deadline) {
    const res = await t.http.get(`/v1/platform/events?limit=9&starting_after=${cursor}`, { token });
    expect(res.status).toBe(200);
    for (const e of res.body.data) seen.push({ id: e.id, seq: e.seq });
    if (res.body.data.length) cursor = res.body.data.at(-1).seq;
    if (done() && seen.length >= n) break;
    if (!res.body.has_more) await sleep(2);
  }
  return seen;
}

test('concurrent writers in two organizations get dense per-organization seqs in commit order, seen exactly once by feed tailers and live subscribers', async ({
  app: t,
}) => {
  const orgs = [await buildTenant(t, ['events:read']), await buildTenant(t, ['events:read'])];
  const live = orgs.map((o) => new SseSubscription(t.origin, o.token, { startingAfter: '0' }));
  const written = orgs.map(() => [] as string[]);
  // Each writer holds its transaction open for a random time before and after
  // appending, so transactions commit in a different order than they append,
  // and the two organizations' commits interleave.
  const writers = orgs.flatMap((o, k) =>
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; i < PER_WRITER; i++) {
        const id = await t.app.deps.db.transaction(async (tx) => {
          await sleep(Math.random() * 6);
          const id = await appendEvent(t.app.deps, tx, {
            test: true,
            organizationId: o.org.id,
            type: 'assertion.created',
            subject: { type: 'entity', id: `w${w}` },
            data: { i },
          });
          await sleep(Math.random() * 6);
          return id;
        });
        written[k]!.push(id);
      }
    }),
  );
  let writersDone = false;
  const done = Promise.all(writers).then(() => (writersDone = true));
  const seen = await Promise.all(orgs.map((o) => tail(o.token, WRITERS * PER_WRITER, () => writersDone)));
  await done;

  for (const [k, o] of orgs.entries()) {
    // Dense and gapless over the organization's whole log, starting at 1 for a new organization.
    const seqs = await logSeqs(o.org.id);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    // The tailer saw every event once, in seq order; no other tenant's volume shows as gaps between them.
    expect(seen[k]).toHaveLength(WRITERS * PER_WRITER);
    expect(new Set(seen[k]!.map((e) => e.id))).toEqual(new Set(written[k]));
    for (let i = 1; i < seen[k]!.length; i++) expect(seen[k]![i]!.seq).toBe(seen[k]![i - 1]!.seq + 1);
    // The live stream tails the global log and hands each organization its own events in the same order.
    const s = live[k]!;
    await waitUntil(
      () => s.events.length >= WRITERS * PER_WRITER || s.errors.length > 0,
      () => `live events (got ${s.events.length})`,
    );
    expect(s.errors).toEqual([]);
    expect(s.events.map((e) => [e.id, e.seq])).toEqual(seen[k]!.map((e) => [e.id, e.seq]));
  }
  await Promise.all(live.map((s) => s.close()));
});

test('an organization continues from its own maximum: events numbered before the change keep their seq', async ({ app: t }) => {
  const { org, token } = await buildTenant(t, ['events:read']);
  // A row as the global sequencer left it: a high seq, and that seq as its position (the migration's backfill).
  const legacy = await insertEventRow(t, {
    id: `evt_${'0'.repeat(30)}42`,
    organizationId: org.id,
    type: 'payout.created',
    subjectType: 'payout',
    subjectId: 'po_1',
    data: {},
    seq: 900_000_000n,
    position: -1n,
  });
  const id = await t.app.deps.db.transaction((tx) =>
    appendEvent(t.app.deps, tx, {
      test: true,
      organizationId: org.id,
      type: 'payout.settled',
      subject: { type: 'payout', id: 'po_1' },
      data: {},
    }),
  );
  await t.app.sequencer.flush();
  const res = await t.http.get('/v1/platform/events?starting_after=899999999', { token });
  expect(res.status).toBe(200);
  expect(res.body.data.map((e: any) => [e.id, e.seq])).toEqual([
    [legacy.id, 900_000_000],
    [id, 900_000_001],
  ]);
});
