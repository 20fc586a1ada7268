import { afterEach, describe, expect } from 'vitest';
import { appendEvents, SseSubscription, waitUntil } from '../support/stream-client.ts';
import { seqsOf } from '../support/db-access.ts';
import { appTest, type TestApp, buildTenant } from '../support/kit.ts';

/** The same Subscription.events over graphql-yoga's SSE transport (POST /graphql, Accept: text/event-stream). */
const test = appTest();
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
const open: SseSubscription[] = [];
test.beforeAll(async ({ app: t }) => {});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await waitUntil(() => t.app.stream.subscriberCount === 0, 'every SSE listener released');
});

const sse = (
  token: string | null,
  variables: { types?: string[]; startingAfter?: string } = {},
  opts: { headers?: Record<string, string> } = {},
) => {
  const s = new SseSubscription(t.origin, token, variables, opts);
  open.push(s);
  return s;
};

describe('live events over SSE', () => {
  test('streams replay then live events of its organization only, and releases the listener when the client goes away', async ({
    app: t,
  }) => {
    const a = await buildTenant(t, ['events:read']);
    const b = await buildTenant(t, ['events:read']);
    const before = await appendEvents(t.app, a.org.id, [{ subjectId: 'op_1' }, { subjectId: 'op_2' }, { subjectId: 'op_3' }]);
    const [first] = await seqsOf(t.app, before);
    const s = sse(a.token, { startingAfter: String(first) });
    await waitUntil(
      () => s.events.length >= 2 && t.app.stream.subscriberCount === 1,
      () => `the replay (got ${JSON.stringify(s.seqs)})`,
    );
    expect(s.status).toBe(200);
    expect(s.contentType).toMatch(/^text\/event-stream/);

    await appendEvents(t.app, b.org.id, [{}]);
    const live = await appendEvents(t.app, a.org.id, [
      { type: 'payout.created' },
      { type: 'internal.audit_written' },
      { type: 'payout.settled' },
    ]);
    await waitUntil(
      () => s.events.length >= 4,
      () => `live events (got ${JSON.stringify(s.seqs)})`,
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(s.errors).toEqual([]);
    expect(s.events.map((e) => e.id)).toEqual([before[1], before[2], live[0], live[2]]);
    expect(s.seqs).toEqual([...s.seqs].sort((x, y) => x - y));

    await s.close();
    await waitUntil(() => t.app.stream.subscriberCount === 0, 'the listener released after the client aborted');
  });

  test('the types filter applies; an unknown type is invalid_event_type', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const s = sse(a.token, { types: ['payout.failed'] });
    await waitUntil(() => t.app.stream.subscriberCount === 1, 'the SSE listener');
    const ids = await appendEvents(t.app, a.org.id, [{ type: 'payout.created' }, { type: 'payout.failed' }]);
    await waitUntil(() => s.events.length >= 1, 'the filtered event');
    await new Promise((r) => setTimeout(r, 200));
    expect(s.events.map((e) => e.id)).toEqual([ids[1]]);

    const bad = sse(a.token, { types: ['payout.exploded'] });
    await waitUntil(() => bad.errors.length > 0 || bad.ended, 'the error');
    expect(bad.errors[0]?.extensions?.code).toBe('invalid_event_type');
  });

  test('auth: no token is platform_token_required, a token without events:read is missing_scope', async ({ app: t }) => {
    const none = sse(null);
    await waitUntil(() => none.errors.length > 0 || none.ended, 'the error');
    expect(none.errors[0]?.extensions?.code).toBe('platform_token_required');

    const c = await buildTenant(t, ['webhooks:read']);
    const scoped = sse(c.token);
    await waitUntil(() => scoped.errors.length > 0 || scoped.ended, 'the error');
    expect(scoped.errors[0]?.extensions?.code).toBe('missing_scope');
    expect(t.app.stream.subscriberCount).toBe(0);
  });
});

describe('SSE event ids and Last-Event-ID', () => {
  test('every next carries id: <seq>, whatever the selection', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const s = new SseSubscription(t.origin, a.token, {}, { query: 'subscription { events { id } }' });
    open.push(s);
    await waitUntil(() => t.app.stream.subscriberCount === 1, 'the SSE listener');
    const ids = await appendEvents(t.app, a.org.id, [{}, {}, {}]);
    await waitUntil(() => s.events.length >= 3, 'three events');
    expect(s.events.map((e) => e.id)).toEqual(ids);
    expect(s.ids).toEqual((await seqsOf(t.app, ids)).map(String));
  });

  test('a reconnect with Last-Event-ID resumes after it with no gap or duplicate while writers append', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const first = sse(a.token);
    await waitUntil(() => t.app.stream.subscriberCount === 1, 'the SSE listener');
    let writing = true;
    const written: string[] = [];
    const writers = Array.from({ length: 3 }, async () => {
      while (writing) {
        written.push(...(await appendEvents(t.app, a.org.id, [{}, {}])));
        // Embedded PGlite can answer in microtasks alone: yield so timers (and the SSE reader) run.
        await new Promise((r) => setImmediate(r));
      }
    });
    try {
      await waitUntil(() => first.events.length >= 5, 'events on the first connection');
      await first.close();
      const lastId = first.ids.at(-1)!;
      const second = sse(a.token, { startingAfter: '0' }, { headers: { 'Last-Event-ID': lastId } }); // Last-Event-ID wins
      await waitUntil(() => second.events.length >= 5, 'events on the reconnect');
      writing = false;
      await Promise.all(writers);
      const all = await seqsOf(t.app, written);
      const max = Math.max(...all);
      await waitUntil(
        () => second.seqs.at(-1) === max,
        () => `the reconnect to reach seq ${max} (at ${second.seqs.at(-1)})`,
      );
      const received = [...first.seqs, ...second.seqs];
      expect(second.seqs[0]).toBe(Number(lastId) + 1);
      expect(received).toEqual([...all].sort((x, y) => x - y).filter((q) => q >= first.seqs[0]!));
      expect(second.ids).toEqual(second.seqs.map(String));
    } finally {
      writing = false;
      await Promise.all(writers);
    }
  });

  test('a Last-Event-ID that is not a seq is invalid_request naming it', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const s = new SseSubscription(t.origin, a.token, {}, { headers: { 'Last-Event-ID': 'evt_nope' } });
    open.push(s);
    await waitUntil(() => s.errors.length > 0 || s.ended, 'the error');
    expect(s.errors[0]?.extensions).toMatchObject({ code: 'invalid_request', param: 'Last-Event-ID' });
    expect(t.app.stream.subscriberCount).toBe(0);
  });
});
