import { describe, expect } from 'vitest';
import { appendEvent } from '../../src/domain/event/event.ts';
import { appTest, type TestApp, buildTenant, emitEvent } from '../support/kit.ts';

const test = appTest();
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const feed = (token: string, query = '') => t.http.get(`/v1/platform/events${query}`, { token });

describe('GET /v1/platform/events', () => {
  test('returns the organization’s public events in ascending seq with the list envelope and event shape', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['events:read']);
    const ids = [];
    for (const type of ['assertion.created', 'assertion.revoked', 'enrollment.qualified'])
      ids.push(await emitEvent(t, org.id, type, { n: ids.length }));
    const res = await feed(token);
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    expect(res.body.has_more).toBe(false);
    expect(res.body.data.map((e: any) => e.id)).toEqual(ids);
    const seqs = res.body.data.map((e: any) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(res.body.data[0]).toEqual({
      id: ids[0],
      object: 'event',
      type: 'assertion.created',
      seq: expect.any(Number),
      subject: { type: 'entity', id: 'ent_1' },
      data: { n: 0, test: true },
      operation: null,
      brand: null,
      livemode: true,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  test('created_at is the instant the event was appended, to the millisecond, alike in the feed, a retrieve and GraphQL', async ({
    app: t,
  }) => {
    const { org, token } = await buildTenant(t, ['events:read']);
    // 7 ms past a whole second: the feed's database-formatted text must pad milliseconds as toISOString does.
    const at = new Date(Math.floor(t.clock.now().getTime() / 1000) * 1000 + 1_007);
    t.clock.set(at);
    const id = await emitEvent(t, org.id);
    const [inFeed] = (await feed(token)).body.data;
    expect(inFeed.created_at).toBe(at.toISOString());
    expect(inFeed.created_at).toMatch(/\.007Z$/);
    expect((await t.http.get(`/v1/platform/events/${id}`, { token })).body).toEqual(inFeed);
    const gql = await t.http.graphql('{ events(first: 1) { edges { node { id createdAt } } } }', {}, { token });
    expect(gql.body.data.events.edges[0].node).toEqual({ id, createdAt: at.toISOString() });
  });

  test('never shows another organization’s events', async ({ app: t }) => {
    const a = await buildTenant(t, ['events:read']);
    const b = await buildTenant(t, ['events:read']);
    await emitEvent(t, a.org.id);
    expect((await feed(b.token)).body.data).toEqual([]);
    expect((await feed(a.token)).body.data).toHaveLength(1);
  });

  test('internal (non-public) event types never leave the organization', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['events:read']);
    const internal = await t.app.deps.db.transaction((tx) =>
      appendEvent(t.app.deps, tx, {
        organizationId: org.id,
        type: 'webhook_endpoint.internal_audit',
        subject: { type: 'x', id: 'y' },
        data: {},
      }),
    );
    const visible = await emitEvent(t, org.id);
    const res = await feed(token);
    expect(res.body.data.map((e: any) => e.id)).toEqual([visible]);
    expect((await t.http.graphql(`{ event(id: "${internal}") { id } }`, {}, { token })).body.errors[0].extensions.code).toBe(
      'resource_missing',
    );
    expect((await feed(token, `?starting_after=${internal}`)).status).toBe(404);
  });

  test('pages with limit and starting_after (a seq or an evt_ id, camelCase or snake_case)', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['events:read']);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await emitEvent(t, org.id));
    const first = await feed(token, '?limit=2');
    expect(first.body.data.map((e: any) => e.id)).toEqual(ids.slice(0, 2));
    expect(first.body.has_more).toBe(true);
    const bySeq = await feed(token, `?limit=2&starting_after=${first.body.data[1].seq}`);
    expect(bySeq.body.data.map((e: any) => e.id)).toEqual(ids.slice(2, 4));
    const byId = await feed(token, `?limit=2&startingAfter=${ids[3]}`);
    expect(byId.body.data.map((e: any) => e.id)).toEqual([ids[4]]);
    expect(byId.body.has_more).toBe(false);
  });

  test('filters by one public type; an unlisted type is 400 invalid_event_type', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['events:read']);
    await emitEvent(t, org.id, 'assertion.created');
    const revoked = await emitEvent(t, org.id, 'assertion.revoked');
    expect((await feed(token, '?type=assertion.revoked')).body.data.map((e: any) => e.id)).toEqual([revoked]);
    for (const bad of ['nope', 'program_member.created', 'webhook_endpoint.internal_audit']) {
      const res = await feed(token, `?type=${bad}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_event_type', param: 'type' });
    }
  });

  test('rejects bad paging input with 400 invalid_request naming the parameter', async ({ app: t }) => {
    const { token } = await buildTenant(t, ['events:read']);
    for (const [q, param] of [
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?limit=abc', 'limit'],
      ['?limit=1&limit=2', 'limit'],
      ['?bogus=1', 'bogus'],
    ] as const) {
      const res = await feed(token, q);
      expect(res.status, q).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', param });
    }
    const missing = await feed(token, '?starting_after=evt_00000000000000000000000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'resource_missing', param: 'starting_after' });
    expect((await feed(token, '?starting_after=we_1')).status).toBe(404);
  });

  test('REST and GraphQL give the same feed and the same errors', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['events:read']);
    for (let i = 0; i < 3; i++) await emitEvent(t, org.id, 'payout.created', { i });
    const rest = await feed(token, '?limit=2');
    const gql = await t.http.graphql(
      'query($after: String) { events(first: 2, after: $after) { edges { cursor node { id type seq subject { type id } data operation livemode createdAt } } pageInfo { hasNextPage endCursor } } }',
      {},
      { token },
    );
    const nodes = gql.body.data.events.edges.map((e: any) => e.node);
    expect(nodes).toEqual(
      rest.body.data.map((e: any) => ({
        id: e.id,
        type: e.type,
        seq: e.seq,
        subject: e.subject,
        data: e.data,
        operation: e.operation,
        livemode: e.livemode,
        createdAt: e.created_at,
      })),
    );
    expect(gql.body.data.events.pageInfo.hasNextPage).toBe(rest.body.has_more);
    const next = await t.http.graphql(
      'query($after: String) { events(first: 2, after: $after) { edges { node { id } } } }',
      { after: gql.body.data.events.pageInfo.endCursor },
      { token },
    );
    expect(next.body.data.events.edges.map((e: any) => e.node.id)).toEqual(
      (await feed(token, `?starting_after=${rest.body.data[1].seq}`)).body.data.map((e: any) => e.id),
    );
    const one = await t.http.graphql(`{ event(id: "${rest.body.data[0].id}") { id seq } }`, {}, { token });
    expect(one.body.data.event).toEqual({ id: rest.body.data[0].id, seq: rest.body.data[0].seq });
    const bad = await t.http.graphql('{ events(first: 1, type: "nope") { edges { cursor } } }', {}, { token });
    expect(bad.body.errors[0].extensions.code).toBe('invalid_event_type');
    const tooMany = await t.http.graphql('{ events(first: 101) { edges { cursor } } }', {}, { token });
    expect(tooMany.body.errors[0].extensions.code).toBe('invalid_request');
  });
});

describe('newest first: GET /v1/platform/events?order=desc and GraphQL events(last:, before:)', () => {
  test('order=desc reads the feed newest first and starting_after pages to older events; limit=1 is the head', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['events:read']);
    expect((await feed(token, '?order=desc&limit=1')).body).toEqual({ object: 'list', data: [], has_more: false });
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await emitEvent(t, org.id, i % 2 ? 'payout.created' : 'assertion.created', { i }));
    const head = await feed(token, '?order=desc&limit=1');
    expect(head.status).toBe(200);
    expect(head.body.data.map((e: any) => e.id)).toEqual([ids[4]]);
    expect(head.body.has_more).toBe(true);
    expect(head.body.data[0]).toEqual((await feed(token)).body.data[4]); // the same object the ascending feed shows
    const page = await feed(token, `?order=desc&limit=2&starting_after=${head.body.data[0].seq}`);
    expect(page.body.data.map((e: any) => e.id)).toEqual([ids[3], ids[2]]);
    expect(page.body.has_more).toBe(true);
    const byId = await feed(token, `?order=desc&starting_after=${ids[2]}`);
    expect(byId.body.data.map((e: any) => e.id)).toEqual([ids[1], ids[0]]);
    expect(byId.body.has_more).toBe(false);
    expect((await feed(token, '?order=asc&limit=2')).body.data.map((e: any) => e.id)).toEqual(ids.slice(0, 2));
    // Each filter, newest first.
    expect((await feed(token, '?order=desc&type=payout.created')).body.data.map((e: any) => e.id)).toEqual([ids[3], ids[1]]);
    expect((await feed(token, '?order=desc&limit=2&subject_id=ent_1')).body.data.map((e: any) => e.id)).toEqual([ids[4], ids[3]]);
    expect((await feed(token, '?order=desc&limit=1&subject_types=entity,payout')).body.data.map((e: any) => e.id)).toEqual([ids[4]]);
    const branded = await t.http.post(
      '/operator/events',
      { organization_id: org.id, brand: org.brands[0]!.id, type: 'payout.settled', subject: { type: 'payout', id: 'po_1' }, data: {} },
      { token: t.operatorToken },
    );
    expect(branded.status, branded.text).toBe(201);
    await emitEvent(t, org.id);
    expect((await feed(token, `?order=desc&brands=${org.brands[0]!.id}`)).body.data.map((e: any) => e.id)).toEqual([branded.body.id]);
    for (const q of ['?order=newest', '?order=DESC', '?order=desc&order=asc']) {
      const res = await feed(token, q);
      expect(res.status, q).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', param: 'order' });
    }
  });

  test('GraphQL last/before read the same pages as REST order=desc, edges in ascending seq; mixing directions is refused', async ({
    app: t,
  }) => {
    const { org, token } = await buildTenant(t, ['events:read']);
    for (let i = 0; i < 4; i++) await emitEvent(t, org.id, 'payout.created', { i });
    const q =
      'query($last: Int, $before: String) { events(last: $last, before: $before) { edges { cursor node { id seq } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }';
    const head = await t.http.graphql(q, { last: 1 }, { token });
    const rest = (await feed(token, '?order=desc&limit=1')).body;
    expect(head.body.data.events.edges).toEqual([
      { cursor: String(rest.data[0].seq), node: { id: rest.data[0].id, seq: rest.data[0].seq } },
    ]);
    expect(head.body.data.events.pageInfo).toEqual({
      hasNextPage: false,
      hasPreviousPage: true,
      startCursor: String(rest.data[0].seq),
      endCursor: String(rest.data[0].seq),
    });
    const older = await t.http.graphql(q, { last: 2, before: String(rest.data[0].seq) }, { token });
    const restOlder = (await feed(token, `?order=desc&limit=2&starting_after=${rest.data[0].seq}`)).body;
    expect(older.body.data.events.edges.map((e: any) => e.node.id)).toEqual(restOlder.data.map((e: any) => e.id).reverse());
    expect(older.body.data.events.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: restOlder.has_more });
    for (const [query, code, param] of [
      ['{ events(first: 1, last: 1) { edges { cursor } } }', 'invalid_request', 'first'],
      ['{ events(after: "1", before: "3") { edges { cursor } } }', 'invalid_request', 'after'],
      ['{ events(last: 0) { edges { cursor } } }', 'invalid_request', 'last'],
      ['{ events(last: 101) { edges { cursor } } }', 'invalid_request', 'last'],
      ['{ events(last: 1, before: "evt_00000000000000000000000000000000") { edges { cursor } } }', 'resource_missing', 'before'],
    ] as const) {
      const res = await t.http.graphql(query, {}, { token });
      expect(res.body.errors?.[0]?.extensions, query).toMatchObject({ code, param });
    }
    // Lists that page one way only still refuse backward paging.
    const { token: lists } = await buildTenant(t, ['webhooks:read']);
    for (const [query, param] of [
      ['{ webhookEndpoints(last: 1) { edges { cursor } } }', 'last'],
      ['{ webhookEndpoints(before: "we_x") { edges { cursor } } }', 'before'],
    ] as const) {
      const res = await t.http.graphql(query, {}, { token: lists });
      expect(res.body.errors?.[0]?.extensions, query).toMatchObject({ code: 'invalid_request', param });
      expect(res.body.errors[0].message).toBe('This list pages with first and after only');
    }
  });
});
