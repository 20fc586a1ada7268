import { afterAll, afterEach, describe, expect } from 'vitest';
import type { Client } from 'graphql-ws';
import { appTest, buildTenant, onPostgres, startSecondApp, type TestApp } from '../support/kit.ts';
import { appendEvents, subscribeLive, waitUntil, wsClient } from '../support/stream-client.ts';
import { seqsOf } from '../support/db-access.ts';

/**
 * Two server processes on one PostgreSQL: a subscriber on B sees what is
 * appended through A (LISTEN/NOTIFY), and the reverse. PostgreSQL only.
 */
const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let b: Awaited<ReturnType<typeof startSecondApp>> | undefined;
const clients: Client[] = [];
test.beforeAll(async ({ app }) => {
  t = app;
  // B's backstop poll is off (one per hour): only LISTEN/NOTIFY can bring it A's events.
  if (onPostgres()) b = await startSecondApp(t, { eventStreamPollMs: 3_600_000 });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
});
afterAll(async () => {
  await b?.stop();
});

const client = (origin: string, secret: string) => {
  const c = wsClient({ origin }, `Bearer ${secret}`);
  clients.push(c);
  return c;
};

describe('scale-out', () => {
  test.skipIf(!onPostgres())(
    'a subscriber on process B receives events appended through process A, in seq order, via LISTEN/NOTIFY',
    async () => {
      const B = b!;
      const { org, token } = await buildTenant(t, ['events:read']);
      const onB = await subscribeLive({ app: B.app }, client(B.origin, token));
      const onA = await subscribeLive(t, client(t.origin, token));

      // Through A's REST operator route, then through A's domain (10 at once).
      const res = await t.http.post(
        '/operator/events',
        { organization_id: org.id, type: 'payout.created', subject: { type: 'payout', id: 'po_1' }, data: {} },
        { token: t.operatorToken },
      );
      expect(res.status, res.text).toBe(201);
      await onB.waitForCount(1);
      const ids = [
        res.body.id,
        ...(await appendEvents(
          t.app,
          org.id,
          Array.from({ length: 10 }, () => ({})),
        )),
      ];
      await onB.waitForCount(11);
      await onA.waitForCount(11);
      const seqs = await seqsOf(t.app, ids);
      expect(onB.events.map((e) => e.id)).toEqual(ids);
      expect(onB.seqs).toEqual(seqs);
      expect(onA.seqs).toEqual(seqs);

      // And the other way round: appended on B, seen on A.
      const back = await appendEvents(B.app, org.id, [{ type: 'operation.failed' }]);
      await onA.waitForCount(12, 3000);
      expect(onA.events.at(-1)!.id).toBe(back[0]);
    },
  );

  test.skipIf(!onPostgres())(
    'concurrent writers on both processes: each subscriber sees every event exactly once, in seq order',
    async () => {
      const B = b!;
      const { org, token } = await buildTenant(t, ['events:read']);
      const onA = await subscribeLive(t, client(t.origin, token));
      const onB = await subscribeLive({ app: B.app }, client(B.origin, token));
      const writes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => appendEvents(i % 2 ? B.app : t.app, org.id, [{ subjectId: `op_${i}` }])),
      );
      await t.app.sequencer.flush();
      await B.app.sequencer.flush();
      const ids = writes.flat();
      const seqs = (await seqsOf(t.app, ids)).sort((x, y) => x - y);
      await onA.waitForCount(20, 4000);
      await onB.waitForCount(20, 4000);
      await new Promise((r) => setTimeout(r, 200));
      expect(onA.seqs).toEqual(seqs);
      expect(onB.seqs).toEqual(seqs);
    },
  );

  test.skipIf(!onPostgres())('unsubscribing on B releases B’s listener', async () => {
    const B = b!;
    const { token } = await buildTenant(t, ['events:read']);
    const c = client(B.origin, token);
    await subscribeLive({ app: B.app }, c);
    expect(B.app.stream.subscriberCount).toBe(1);
    await c.dispose();
    await waitUntil(() => B.app.stream.subscriberCount === 0, 'B’s listener released');
  });
});
