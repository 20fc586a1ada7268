import { afterEach, describe, expect } from 'vitest';
import type { Client } from 'graphql-ws';
import { appendEvents, subscribeLive, waitUntil, wsClient } from '../support/stream-client.ts';
import { seqsOf } from '../support/db-access.ts';
import { isDomainError } from '../../src/domain/errors.ts';
import type { PublicEvent } from '../../src/domain/event/event.ts';
import { appTest, type TestApp, buildOrg, buildTenant, buildToken } from '../support/kit.ts';

/**
 * Multiplexed fan-out (src/runtime/event-stream.ts, src/graphql/live.ts):
 * subscribers that share organization, filter, document, variables and
 * authorization scope share one rendered payload per event, and nothing
 * else is shared: other organizations and filters never receive each
 * other's events, and a slow or revoked subscriber ends alone.
 */
const test = appTest({ config: { streamMaxPending: 5 } });
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
const clients: Client[] = [];
test.beforeAll(async ({ app: t }) => {});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
  await waitUntil(() => t.app.stream.subscriberCount === 0, 'every listener released after the test');
});

const client = (secret: string) => {
  const c = wsClient(t, `Bearer ${secret}`);
  clients.push(c);
  return c;
};

describe('multiplexed fan-out', () => {
  test('one document across two organizations and two filters: one render per group, and no subscriber receives another group’s events', async ({
    app: t,
  }) => {
    const a = await buildTenant(t, ['events:read']);
    const b = await buildTenant(t, ['events:read']);
    const groupsBefore = t.app.stream.groupCount;
    const a1 = await subscribeLive(t, client(a.token));
    const a2 = await subscribeLive(t, client(a.token));
    const aPayouts = await subscribeLive(t, client(a.token), { types: ['payout.created'] });
    const b1 = await subscribeLive(t, client(b.token));
    const bPayouts = await subscribeLive(t, client(b.token), { types: ['payout.created'] });
    // a1 and a2 share a group; the other three are each their own.
    expect(t.app.stream.groupCount - groupsBefore).toBe(4);

    const idsA = await appendEvents(t.app, a.org.id, [
      { type: 'payout.created' },
      { type: 'operation.succeeded' },
      { type: 'payout.created' },
    ]);
    const idsB = await appendEvents(t.app, b.org.id, [{ type: 'operation.failed' }, { type: 'payout.created' }]);
    await Promise.all([a1.waitForCount(3), a2.waitForCount(3), aPayouts.waitForCount(2), b1.waitForCount(2), bPayouts.waitForCount(1)]);
    await new Promise((r) => setTimeout(r, 200)); // stragglers would arrive now
    expect(a1.events.map((e) => e.id)).toEqual(idsA);
    expect(a2.events).toEqual(a1.events);
    expect(aPayouts.events.map((e) => e.id)).toEqual([idsA[0], idsA[2]]);
    expect(b1.events.map((e) => e.id)).toEqual(idsB);
    expect(bPayouts.events.map((e) => e.id)).toEqual([idsB[1]]);
    for (const s of [a1, a2, aPayouts, b1, bPayouts]) expect(s.errors).toEqual([]);
  });

  test('the same document under different scopes is not shared', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const wider = await buildToken(t, a.org, ['events:read', 'assertions:write']);
    const groupsBefore = t.app.stream.groupCount;
    await subscribeLive(t, client(a.token));
    await subscribeLive(t, client(wider.secret));
    expect(t.app.stream.groupCount - groupsBefore).toBe(2);
  });

  test('a revoked group-mate ends alone: the other token of the same scope keeps every event', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const other = await buildToken(t, a.org, ['events:read']);
    const groupsBefore = t.app.stream.groupCount;
    const doomed = await subscribeLive(t, client(a.token));
    const kept = await subscribeLive(t, client(other.secret));
    expect(t.app.stream.groupCount - groupsBefore).toBe(1); // same organization, filter, document and scope: one group

    const first = await appendEvents(t.app, a.org.id, [{}]);
    await Promise.all([doomed.waitForCount(1), kept.waitForCount(1)]);
    const res = await t.http.post('/platform/tokens/revoke', { token_id: a.tokenId }, { token: a.org.userToken });
    expect(res.status).toBe(200);
    expect((await doomed.firstError()).extensions?.code).toBe('invalid_token');
    const later = await appendEvents(t.app, a.org.id, [{}, {}]);
    await kept.waitForCount(3);
    expect(kept.events.map((e) => e.id)).toEqual([...first, ...later]);
    expect(kept.errors).toEqual([]);
    expect(doomed.events.map((e) => e.id)).toEqual(first);
  });

  test('a slow group-mate is ended past its queue with last_seq; the other gets every event and each event is rendered once', async ({
    app: t,
  }) => {
    const org = await buildOrg(t);
    const renders: number[] = [];
    const view = { key: 'test-view', render: (e: PublicEvent) => (renders.push(e.seq), JSON.stringify({ seq: e.seq })) };
    const fastGot: string[] = [];
    const slowGot: string[] = [];
    const fast = t.app.stream.subscribe(org.id, { view, sink: { write: (p, _seq, done) => (fastGot.push(p), done()) } });
    const slow = t.app.stream.subscribe(org.id, { view, sink: { write: (p) => void slowGot.push(p) } }); // never taken
    const groupsBefore = t.app.stream.groupCount;
    const fastEnd = fast.next();
    const slowEnd = slow.next().then(
      () => undefined,
      (e: unknown) => e,
    );
    await waitUntil(() => t.app.stream.subscriberCount === 2, 'both subscribers');
    expect(t.app.stream.groupCount - groupsBefore).toBe(1);
    const ids = await appendEvents(
      t.app,
      org.id,
      Array.from({ length: 10 }, () => ({})),
    );
    const seqs = await seqsOf(t.app, ids);
    await waitUntil(
      () => fastGot.length === 10,
      () => `ten events on the fast sink (got ${fastGot.length})`,
    );
    expect(fastGot).toEqual(seqs.map((seq) => JSON.stringify({ seq })));
    const err = await slowEnd;
    expect(isDomainError(err) && err.code).toBe('subscriber_too_slow');
    expect(slowGot).toEqual(fastGot.slice(0, 5));
    expect(isDomainError(err) && err.details).toMatchObject({ last_seq: String(seqs[4]) });
    expect(renders).toEqual(seqs); // once per event for the group, not once per subscriber
    await fast.return!();
    await fastEnd;
  });
});
