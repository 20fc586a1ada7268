import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { appendEvent } from '../../src/domain/event/event.ts';
import { appTest, buildTenant } from '../support/kit.ts';
import { insertEventRow } from '../support/db-access.ts';

const test = appTest();

test('a reader tailing with starting_after sees every event exactly once, in seq order, while concurrent writers commit out of order', async ({
  app: t,
}) => {
  const { org, token } = await buildTenant(t, ['events:read']);
  const WRITERS = 8;
  const PER_WRITER = 15;
  const written: string[] = [];
  // Each writer holds its transaction open for a random time before and after
  // appending, so transactions commit in a different order than they append.
  const writers = Array.from({ length: WRITERS }, async (_, w) => {
    for (let i = 0; i < PER_WRITER; i++) {
      const id = await t.app.deps.db.transaction(async (tx) => {
        await sleep(Math.random() * 8);
        const id = await appendEvent(t.app.deps, tx, {
          test: true,
          organizationId: org.id,
          type: 'assertion.created',
          subject: { type: 'entity', id: `w${w}` },
          data: { i },
        });
        await sleep(Math.random() * 8);
        return id;
      });
      written.push(id);
    }
  });

  const seen: { id: string; seq: number }[] = [];
  let cursor: number | undefined;
  // The reader's time limit runs from the writers' end: on a loaded machine writing alone can take longer than any fixed budget.
  let deadline = Infinity;
  const done = Promise.all(writers);
  let writersDone = false;
  const writersEnded = () => ((writersDone = true), (deadline = Date.now() + 25_000));
  void done.then(writersEnded, writersEnded);
  while (Date.now() < deadline) {
    const res = await t.http.get(`/v1/platform/events?limit=7${cursor === undefined ? '' : `&starting_after=${cursor}`}`, { token });
    expect(res.status).toBe(200);
    for (const e of res.body.data) seen.push({ id: e.id, seq: e.seq });
    if (res.body.data.length) cursor = res.body.data.at(-1).seq;
    if (writersDone && seen.length >= WRITERS * PER_WRITER) break;
    if (!res.body.has_more) await sleep(2);
  }
  await done;

  expect(seen).toHaveLength(WRITERS * PER_WRITER);
  expect(new Set(seen.map((e) => e.id))).toEqual(new Set(written));
  for (let i = 1; i < seen.length; i++) expect(seen[i]!.seq).toBeGreaterThan(seen[i - 1]!.seq);
});

test('events committed by a process that died before sequencing them are picked up by the periodic sweep', async ({ app: t }) => {
  const { org, token } = await buildTenant(t, ['events:read']);
  // Insert directly, as a crashed writer would have left it: committed, never sequenced, no kick.
  const id = `evt_${'0'.repeat(31)}1`;
  await insertEventRow(t, { id, organizationId: org.id, type: 'payout.created', subjectType: 'payout', subjectId: 'po_1', data: {} });
  const deadline = Date.now() + 5000;
  let ids: string[] = [];
  while (Date.now() < deadline && !ids.includes(id)) {
    ids = (await t.http.get('/v1/platform/events', { token })).body.data.map((e: any) => e.id);
    await sleep(100);
  }
  expect(ids).toContain(id);
});
