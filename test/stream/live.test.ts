import { afterEach, describe, expect } from 'vitest';
import type { Client } from 'graphql-ws';
import { appendEvents, subscribeLive, Subscription, waitUntil, wsClient } from '../support/stream-client.ts';
import { seqsOf } from '../support/db-access.ts';
import { appTest, type TestApp, buildTenant, buildToken } from '../support/kit.ts';

/**
 * Subscription.events over graphql-ws with the real client: organization
 * isolation, public types only, seq order, the `types` filter, replay from
 * startingAfter with no gap or duplicate at the seam, auth, and release of
 * the server-side listener on unsubscribe.
 */
const test = appTest();
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
const clients: Client[] = [];
test.beforeAll(async ({ app: t }) => {});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
  await waitUntil(() => t.app.stream.subscriberCount === 0, 'every listener released after the test');
});

const client = (secret: string | null) => {
  const c = wsClient(t, secret === null ? null : `Bearer ${secret}`);
  clients.push(c);
  return c;
};
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('live events over graphql-ws', () => {
  test('delivers its organization’s public events live, in seq order; internal types and other organizations never arrive', async ({
    app: t,
  }) => {
    const a = await buildTenant(t, ['events:read']);
    const b = await buildTenant(t, ['events:read']);
    const subA = await subscribeLive(t, client(a.token));
    const subB = await subscribeLive(t, client(b.token));

    const idsA = await appendEvents(t.app, a.org.id, [
      { type: 'operation.succeeded', subjectId: 'op_1' },
      { type: 'internal.audit_written', subjectId: 'op_x' },
      { type: 'payout.created', subjectId: 'po_1' },
    ]);
    const idsB = await appendEvents(t.app, b.org.id, [{ type: 'budget.reserved', subjectId: 'bu_1' }]);
    const idsA2 = await appendEvents(t.app, a.org.id, [{ type: 'operation.failed', subjectId: 'op_2' }]);

    await subA.waitForCount(3);
    await subB.waitForCount(1);
    // Give stragglers a chance to (wrongly) arrive.
    await new Promise((r) => setTimeout(r, 200));
    expect(subA.errors).toEqual([]);
    expect(subA.events.map((e) => e.id)).toEqual([idsA[0], idsA[2], idsA2[0]]);
    expect(subA.events.map((e) => e.type)).toEqual(['operation.succeeded', 'payout.created', 'operation.failed']);
    expect(subA.seqs).toEqual([...subA.seqs].sort((x, y) => x - y));
    expect(subA.events[0]).toMatchObject({ subject: { type: 'operation', id: 'op_1' }, livemode: expect.any(Boolean) });
    expect(subB.events.map((e) => e.id)).toEqual(idsB);
    expect(subB.seqs).toEqual(await seqsOf(t.app, idsB));
  });

  test('the types filter delivers only the named types', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const sub = await subscribeLive(t, client(a.token), { types: ['payout.created', 'payout.failed'] });
    const ids = await appendEvents(t.app, a.org.id, [
      { type: 'operation.succeeded' },
      { type: 'payout.created' },
      { type: 'operation.failed' },
      { type: 'payout.failed' },
    ]);
    await sub.waitForCount(2);
    await new Promise((r) => setTimeout(r, 200));
    expect(sub.events.map((e) => e.id)).toEqual([ids[1], ids[3]]);
  });

  test('an unknown type is invalid_event_type and registers no listener', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    for (const types of [['payout.nope'], ['payout.created', 'internal.audit_written']]) {
      const sub = new Subscription(client(a.token), { types });
      const err = await sub.firstError();
      expect(err.extensions?.code).toBe('invalid_event_type');
      expect(err.message).toContain(types.at(-1));
      await waitUntil(() => sub.completed, 'the failed subscription to complete');
    }
    const both = new Subscription(client(a.token), { types: ['payout.nope', 'operation.succeeded', 'budget.nope'] });
    const err = await both.firstError();
    expect(err.extensions).toMatchObject({ code: 'invalid_event_type', param: 'types' });
    expect(err.message).toContain('payout.nope');
    expect(err.message).toContain('budget.nope');
    expect(t.app.stream.subscriberCount).toBe(0);
  });

  test('a legacy relationship spelling in types receives the canonical relationship.* event', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const sub = await subscribeLive(t, client(a.token), { types: ['program_member.created', 'relationship.created'] });
    const ids = await appendEvents(t.app, a.org.id, [{ type: 'relationship.activated' }, { type: 'relationship.created' }]);
    await sub.waitForCount(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(sub.events.map((e) => [e.id, e.type])).toEqual([[ids[1], 'relationship.created']]);
  });

  test('startingAfter (a seq) replays every later event then continues live, with no gap or duplicate at the seam under concurrent appends', async ({
    app: t,
  }) => {
    const a = await buildTenant(t, ['events:read']);
    const other = await buildTenant(t, ['events:read']);
    const N = 30;
    const ids = await appendEvents(
      t.app,
      a.org.id,
      range(1, N).map((i) => ({ subjectId: `op_${i}` })),
    );
    const seqs = await seqsOf(t.app, ids);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));

    // Concurrent writers while the subscriber replays: ours and another organization's.
    const M = 40;
    let appended: string[] = [];
    const writers = (async () => {
      for (let i = 0; i < M; i += 4) {
        const batch = await Promise.all(
          range(0, 3).map((k) => appendEvents(t.app, a.org.id, [{ subjectId: `op_live_${i + k}` }]).then((x) => x[0]!)),
        );
        appended = appended.concat(batch);
        await appendEvents(t.app, other.org.id, [{}]);
      }
    })();
    const sub = new Subscription(client(a.token), { startingAfter: String(seqs[1]) });
    await writers;
    await sub.waitForCount(N - 2 + M, 8000);
    await new Promise((r) => setTimeout(r, 200));

    const expected = [...seqs.slice(2), ...(await seqsOf(t.app, appended))].sort((x, y) => x - y);
    expect(sub.errors).toEqual([]);
    expect(sub.seqs).toEqual(expected);
    expect(new Set(sub.events.map((e) => e.id)).size).toBe(sub.events.length);
    expect(new Set(sub.events.map((e) => e.id))).toEqual(new Set([...ids.slice(2), ...appended]));
  });

  test('startingAfter (an evt_ id) replays from that event, combined with a types filter', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const ids = await appendEvents(t.app, a.org.id, [
      { type: 'payout.created' },
      { type: 'payout.created' },
      { type: 'operation.succeeded' },
      { type: 'payout.settled' },
      { type: 'payout.created' },
    ]);
    const sub = new Subscription(client(a.token), { startingAfter: ids[1], types: ['payout.created', 'payout.settled'] });
    await sub.waitForCount(2);
    const live = await appendEvents(t.app, a.org.id, [{ type: 'operation.failed' }, { type: 'payout.settled' }]);
    await sub.waitForCount(3);
    await new Promise((r) => setTimeout(r, 200));
    expect(sub.events.map((e) => e.id)).toEqual([ids[3], ids[4], live[1]]);
  });

  test('startingAfter that is not an event of the feed is resource_missing; a malformed one is rejected', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const b = await buildTenant(t, ['events:read']);
    const [theirs] = await appendEvents(t.app, b.org.id, [{}]);
    for (const startingAfter of [theirs!, 'evt_doesnotexist', 'not-a-cursor']) {
      const sub = new Subscription(client(a.token), { startingAfter });
      const err = await sub.firstError();
      expect(err.extensions?.code, startingAfter).toBe('resource_missing');
    }
    expect(t.app.stream.subscriberCount).toBe(0);
  });

  test('two subscribers in one process both receive every event', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const s1 = await subscribeLive(t, client(a.token));
    const s2 = await subscribeLive(t, client(a.token));
    const ids = await appendEvents(
      t.app,
      a.org.id,
      range(1, 5).map(() => ({})),
    );
    await s1.waitForCount(5);
    await s2.waitForCount(5);
    expect(s1.events.map((e) => e.id)).toEqual(ids);
    expect(s2.events.map((e) => e.id)).toEqual(ids);
  });

  test('unsubscribing (complete, or disposing the client) releases the server-side listener', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const c1 = client(a.token);
    const s1 = await subscribeLive(t, c1);
    const s2 = await subscribeLive(t, c1);
    expect(t.app.stream.subscriberCount).toBe(2);
    s1.dispose(); // graphql-ws `complete` for one operation; the socket stays open
    await waitUntil(
      () => t.app.stream.subscriberCount === 1,
      () => `one listener left (have ${t.app.stream.subscriberCount})`,
    );
    await appendEvents(t.app, a.org.id, [{}]);
    await s2.waitForCount(1);
    await c1.dispose(); // closes the socket with s2 still open
    await waitUntil(
      () => t.app.stream.subscriberCount === 0,
      () => `no listener left (have ${t.app.stream.subscriberCount})`,
    );

    // Unsubscribing while the replay is still in progress releases it too.
    await appendEvents(
      t.app,
      a.org.id,
      range(1, 250).map(() => ({})),
      { oneTransaction: true },
    );
    const c2 = client(a.token);
    const s3 = new Subscription(c2, { startingAfter: '0' });
    await waitUntil(() => s3.events.length > 0, 'the replay to start');
    await c2.dispose();
    await waitUntil(
      () => t.app.stream.subscriberCount === 0,
      () => `no listener left after a mid-replay dispose (have ${t.app.stream.subscriberCount})`,
    );
  });
});

describe('graphql-ws authentication', () => {
  test('no connectionParams.authorization is platform_token_required', async ({ app: t }) => {
    const sub = new Subscription(client(null));
    const err = await sub.firstError();
    expect(err.extensions?.code).toBe('platform_token_required');
    expect(t.app.stream.subscriberCount).toBe(0);
  });

  test('a token without events:read is missing_scope', async ({ app: t }) => {
    const a = await buildTenant(t, ['webhooks:read']);
    const sub = new Subscription(client(a.token));
    const err = await sub.firstError();
    expect(err.extensions?.code).toBe('missing_scope');
    expect(err.extensions?.required_scope).toBe('events:read');
    expect(t.app.stream.subscriberCount).toBe(0);
  });

  test('an unknown or revoked token is refused', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const bogus = new Subscription(client(`sk_platform_live_${'x'.repeat(40)}`));
    expect((await bogus.firstError()).extensions?.code).toBe('invalid_token');
    const extra = await buildToken(t, a.org, ['events:read']);
    const revoke = await t.http.post('/platform/tokens/revoke', { token_id: extra.id }, { token: a.org.userToken });
    expect(revoke.status, revoke.text).toBe(200);
    const revoked = new Subscription(client(extra.secret));
    expect((await revoked.firstError()).extensions?.code).toBe('invalid_token');
  });
});
