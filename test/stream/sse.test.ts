import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { buildOrgWithToken } from '../support/factories.ts';
import { appendEvents, seqsOf, SseSubscription, waitUntil } from '../support/stream-client.ts';

/** The same Subscription.events over graphql-yoga's SSE transport (POST /graphql, Accept: text/event-stream). */
let t: TestApp;
const open: SseSubscription[] = [];
beforeAll(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await waitUntil(() => t.app.stream.subscriberCount === 0, 'every SSE listener released');
});
afterAll(() => t?.stop());

const sse = (token: string | null, variables: { types?: string[]; startingAfter?: string } = {}) => {
  const s = new SseSubscription(t.origin, token, variables);
  open.push(s);
  return s;
};

describe('live events over SSE', () => {
  it('streams replay then live events of its organization only, and releases the listener when the client goes away', async () => {
    const a = await buildOrgWithToken(t, ['events:read']);
    const b = await buildOrgWithToken(t, ['events:read']);
    const before = await appendEvents(t.app, a.org.id, [{ subjectId: 'op_1' }, { subjectId: 'op_2' }, { subjectId: 'op_3' }]);
    const [first] = await seqsOf(t.app, before);
    const s = sse(a.token, { startingAfter: String(first) });
    await waitUntil(() => s.events.length >= 2 && t.app.stream.subscriberCount === 1, () => `the replay (got ${JSON.stringify(s.seqs)})`);
    expect(s.status).toBe(200);
    expect(s.contentType).toMatch(/^text\/event-stream/);

    await appendEvents(t.app, b.org.id, [{}]);
    const live = await appendEvents(t.app, a.org.id, [{ type: 'payout.created' }, { type: 'internal.audit_written' }, { type: 'payout.settled' }]);
    await waitUntil(() => s.events.length >= 4, () => `live events (got ${JSON.stringify(s.seqs)})`);
    await new Promise((r) => setTimeout(r, 200));
    expect(s.errors).toEqual([]);
    expect(s.events.map((e) => e.id)).toEqual([before[1], before[2], live[0], live[2]]);
    expect(s.seqs).toEqual([...s.seqs].sort((x, y) => x - y));

    await s.close();
    await waitUntil(() => t.app.stream.subscriberCount === 0, 'the listener released after the client aborted');
  });

  it('the types filter applies; an unknown type is invalid_event_type', async () => {
    const a = await buildOrgWithToken(t, ['events:read']);
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

  it('auth: no token is platform_token_required, a token without events:read is missing_scope', async () => {
    const none = sse(null);
    await waitUntil(() => none.errors.length > 0 || none.ended, 'the error');
    expect(none.errors[0]?.extensions?.code).toBe('platform_token_required');

    const c = await buildOrgWithToken(t, ['webhooks:read']);
    const scoped = sse(c.token);
    await waitUntil(() => scoped.errors.length > 0 || scoped.ended, 'the error');
    expect(scoped.errors[0]?.extensions?.code).toBe('missing_scope');
    expect(t.app.stream.subscriberCount).toBe(0);
  });
});
