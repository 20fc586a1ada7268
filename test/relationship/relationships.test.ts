import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, vi } from 'vitest';
import { PUBLIC_EVENT_TYPES } from '../../src/domain/event/types.ts';
import { appTest, buildTenant, onPostgres, expectGraphQLError, expectPlatformError, feedEvents, type TestApp } from '../support/kit.ts';
import { ALL_SCOPES, activeEnrollment, api, ENT, expectStatus } from '../assertion/helpers.ts';
import { createEndpoint, listDeliveries, settle, webhookConfig } from '../webhook/receiver.ts';
import { internalEvents } from '../support/db-access.ts';

const test = appTest({ config: webhookConfig({ retryScheduleMs: [0] }) });
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const P = '/v1/platform';
const REL = /^rel_[0-9a-f]{32}$/;
const SCOPES = [...ALL_SCOPES, 'relationships:read', 'relationships:write', 'entities:read', 'webhooks:read', 'webhooks:write'];
const idp = 'https://idp.example';

async function tenant(scopes = SCOPES) {
  const { org, token } = await buildTenant(t, scopes);
  const opts = (headers?: Record<string, string>) => ({ token, headers });
  return {
    org,
    token,
    a: api(t, token),
    create: (body: unknown, headers?: Record<string, string>) => t.http.post(`${P}/relationships`, body, opts(headers)),
    move: (id: string, verb: string, headers?: Record<string, string>) =>
      t.http.post(`${P}/relationships/${id}/${verb}`, undefined, opts(headers)),
    get: (path: string, headers?: Record<string, string>) => t.http.get(`${P}${path}`, opts(headers)),
  };
}

describe('relationships', () => {
  test('created → active ⇄ paused → ended, one event per move in the same transaction; a new one may follow an ended one', async () => {
    const { create, move, get, token } = await tenant();
    const user = randomUUID();
    const rel = expectStatus(await create({ external_user_id: user, issuer: idp }), 201);
    expect(rel).toEqual({
      id: expect.stringMatching(REL),
      object: 'relationship',
      brand: expect.stringMatching(/^brand_/),
      entity: expect.stringMatching(ENT),
      status: 'created',
      ended_at: null,
      livemode: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // The same external pair names the same entity; a second live relationship is refused.
    expectPlatformError(await create({ external_user_id: user, issuer: idp }), 409, 'resource_conflict', 'entity');
    expectPlatformError(await create({ entity: rel.entity }), 409, 'resource_conflict', 'entity');
    expect(expectStatus(await move(rel.id, 'activate'), 200).status).toBe('active');
    expect(expectStatus(await move(rel.id, 'pause'), 200).status).toBe('paused');
    expect(expectStatus(await move(rel.id, 'resume'), 200).status).toBe('active');
    const ended = expectStatus(await move(rel.id, 'end'), 200);
    expect(ended.status).toBe('ended');
    expect(ended.ended_at).toEqual(expect.any(String));
    expect(expectStatus(await get(`/relationships/${rel.id}`), 200)).toEqual(ended);
    const events = (await feedEvents(t, token)).filter((e) => e.subject.id === rel.id);
    expect(events.map((e) => e.type)).toEqual([
      'relationship.created',
      'relationship.activated',
      'relationship.paused',
      'relationship.resumed',
      'relationship.ended',
    ]);
    expect(events.every((e) => e.subject.type === 'relationship' && e.brand === rel.brand)).toBe(true);
    expect(events.at(-1).data).toMatchObject({ id: rel.id, status: 'ended', entity: rel.entity });
    // Ended is final; a new relationship may follow.
    const again = expectStatus(await create({ entity: rel.entity }), 201);
    expect(again.id).not.toBe(rel.id);
    expect(again.status).toBe('created');
  });

  test('every other move is 409 invalid_state_transition and changes nothing', async () => {
    const { create, move, get } = await tenant();
    const rel = expectStatus(await create({ external_user_id: randomUUID(), issuer: idp }), 201);
    const refused = async (verb: string, status: string) => {
      const res = await move(rel.id, verb);
      expectPlatformError(res, 409, 'invalid_state_transition');
      expect(res.body.error.message).toContain(status);
      expect(expectStatus(await get(`/relationships/${rel.id}`), 200).status).toBe(status);
    };
    await refused('pause', 'created');
    await refused('resume', 'created');
    expectStatus(await move(rel.id, 'activate'), 200);
    await refused('activate', 'active');
    await refused('resume', 'active');
    expectStatus(await move(rel.id, 'pause'), 200);
    await refused('pause', 'paused');
    await refused('activate', 'paused');
    expectStatus(await move(rel.id, 'end'), 200);
    for (const verb of ['activate', 'pause', 'resume', 'end']) await refused(verb, 'ended');
    // A created relationship may end without ever being active.
    const other = expectStatus(await create({ external_user_id: randomUUID(), issuer: idp }), 201);
    expect(expectStatus(await move(other.id, 'end'), 200).status).toBe('ended');
  });

  test("ending pauses the entity's active enrollments in the brand's programs only: no public event, standing no longer evaluated", async () => {
    const { a, create, move, token, org } = await tenant();
    const { enrollment, entity, program } = await activeEnrollment(a);
    // A pending enrollment in the same brand and an active one in the other brand stay as they are.
    const other = expectStatus(await a.createProgram({ name: 'Other' }), 201);
    const pending = expectStatus(await a.enroll({ program: other.id, entity }), 201);
    const second = { 'service-brand': org.brands[1]!.id };
    const elsewhere = expectStatus(await t.http.post(`${P}/programs`, { name: 'Second' }, { token, headers: second }), 201);
    const far = expectStatus(await t.http.post(`${P}/enrollments`, { program: elsewhere.id, entity }, { token, headers: second }), 201);
    for (const verb of ['approve', 'activate'])
      expectStatus(await t.http.post(`${P}/enrollments/${far.id}/${verb}`, undefined, { token, headers: second }), 200);
    expect(expectStatus(await a.assert({ entity, key: 'verified' }), 201).key).toBe('verified');
    expect(expectStatus(await a.enrollment(enrollment.id), 200).standing).toBe('qualified');
    const rel = expectStatus(await create({ entity }), 201);
    expectStatus(await move(rel.id, 'activate'), 200);
    const before = await feedEvents(t, token);
    expectStatus(await move(rel.id, 'end'), 200);
    const paused = expectStatus(await a.enrollment(enrollment.id), 200);
    expect(paused).toMatchObject({ status: 'paused', standing: 'qualified', program: program.id });
    expect(expectStatus(await a.enrollment(pending.id), 200).status).toBe('pending');
    const farNow = expectStatus(await t.http.get(`${P}/enrollments/${far.id}`, { token, headers: second }), 200);
    expect(farNow.status).toBe('active');
    // The only public event of the end is relationship.ended; an internal event records the pause.
    const after = (await feedEvents(t, token)).slice(before.length);
    expect(after.map((e) => e.type)).toEqual(['relationship.ended']);
    const internal = await internalEvents(t, enrollment.id, 'enrollment.paused');
    expect(internal).toHaveLength(1);
    expect(internal[0]!.data).toMatchObject({ status: 'paused', cause: { relationship: rel.id } });
    // Standing is evaluated only while active: revoking the claim leaves the paused enrollment as it was.
    expectStatus(await a.revoke({ entity, key: 'verified' }), 201);
    expect(expectStatus(await a.enrollment(enrollment.id), 200)).toEqual(paused);
    expect(expectStatus(await a.enrollments({ status: 'paused' }), 200).data.map((e: any) => e.id)).toEqual([enrollment.id]);
    const g = await t.http.graphql(`{ enrollment(id: "${enrollment.id}") { status } }`, {}, { token });
    expect(g.body.data.enrollment.status).toBe('PAUSED');
  });

  test('a paused enrollment resumes (POST /enrollments/{id}/resume) only once a relationship that has not ended exists; standing is evaluated again', async () => {
    const { a, create, move, token } = await tenant();
    const { enrollment, entity } = await activeEnrollment(a);
    expectStatus(await a.assert({ entity, key: 'verified' }), 201);
    const rel = expectStatus(await create({ entity }), 201);
    expectStatus(await move(rel.id, 'end'), 200);
    expectStatus(await a.revoke({ entity, key: 'verified' }), 201);
    expect(expectStatus(await a.enrollment(enrollment.id), 200)).toMatchObject({ status: 'paused', standing: 'qualified' });
    const resume = () => t.http.post(`${P}/enrollments/${enrollment.id}/resume`, undefined, { token });
    // The relationship ended: nothing to resume under.
    const refused = await resume();
    expectPlatformError(refused, 409, 'invalid_state_transition');
    expect(refused.body.error.message).toContain('no relationship');
    expectStatus(await create({ entity }), 201);
    const resumed = expectStatus(await resume(), 200);
    // Active again, and its standing caught up with the claim revoked while it was paused.
    expect(resumed).toMatchObject({ status: 'active', standing: 'not_qualified' });
    const internal = await internalEvents(t, enrollment.id, 'enrollment.resumed');
    expect(internal).toHaveLength(1);
    expectPlatformError(await resume(), 409, 'invalid_state_transition');
  });

  test('list: newest first within the brand, filtered by subject and status, paged; retrieve', async () => {
    const { create, move, get, org } = await tenant();
    const [r1, r2, r3] = [
      expectStatus(await create({ external_user_id: 'a', issuer: idp }), 201),
      expectStatus(await create({ external_user_id: 'b', issuer: idp }), 201),
      expectStatus(await create({ external_user_id: 'c', issuer: idp }), 201),
    ];
    expectStatus(await move(r2.id, 'activate'), 200);
    const otherBrand = expectStatus(await create({ entity: r1.entity }, { 'service-brand': org.brands[1]!.id }), 201);
    expect(otherBrand.brand).toBe(org.brands[1]!.id);
    const ids = async (q: string) => expectStatus(await get(`/relationships${q}`), 200).data.map((r: any) => r.id);
    expect(await ids('')).toEqual([r3.id, r2.id, r1.id]);
    expect(await ids('?status=active')).toEqual([r2.id]);
    expect(await ids(`?entity=${r1.entity}`)).toEqual([r1.id]);
    expect(await ids(`?external_user_id=b&issuer=${encodeURIComponent(idp)}`)).toEqual([r2.id]);
    expect(await ids(`?external_user_id=never&issuer=${encodeURIComponent(idp)}`)).toEqual([]);
    const page = expectStatus(await get('/relationships?limit=2'), 200);
    expect(page.has_more).toBe(true);
    expect(await ids(`?limit=2&starting_after=${page.data[1].id}`)).toEqual([r1.id]);
    // Another brand's relationship is not this brand's.
    expectPlatformError(await get(`/relationships/${otherBrand.id}`), 404, 'resource_missing');
    expect(expectStatus(await get(`/relationships/${otherBrand.id}`, { 'service-brand': org.brands[1]!.id }), 200)).toEqual(otherBrand);
  });

  test("another organization's ids, unknown ids and bad input: a clear 4xx, never a 500", async () => {
    const mine = await tenant();
    const theirs = await tenant();
    const rel = expectStatus(await theirs.create({ external_user_id: 'x', issuer: idp }), 201);
    expectPlatformError(await mine.get(`/relationships/${rel.id}`), 404, 'resource_missing');
    for (const verb of ['activate', 'pause', 'resume', 'end']) expectPlatformError(await mine.move(rel.id, verb), 404, 'resource_missing');
    expectPlatformError(await mine.move('rel_nope', 'activate'), 404, 'resource_missing');
    expectPlatformError(await mine.create({ entity: rel.entity }), 404, 'resource_missing', 'entity');
    expectPlatformError(await mine.create({ entity: 'ent_nope' }), 404, 'resource_missing', 'entity');
    expectPlatformError(await mine.get(`/relationships?entity=${rel.entity}`), 404, 'resource_missing', 'entity');
    expectPlatformError(await mine.get(`/relationships?starting_after=${rel.id}`), 404, 'resource_missing', 'starting_after');
    expectPlatformError(await mine.get(`/entities/${rel.entity}`), 404, 'resource_missing');
    expectPlatformError(await mine.create({}), 400, 'invalid_request', 'entity');
    expectPlatformError(await mine.create({ external_user_id: 'a\u0000b', issuer: idp }), 400, 'invalid_request', 'external_user_id');
    expectPlatformError(await mine.create({ external_user_id: 'a', issuer: 'i\u0000' }), 400, 'invalid_request', 'issuer');
    expectPlatformError(await mine.create({ external_user_id: 5, issuer: idp }), 400, 'invalid_request', 'external_user_id');
    expectPlatformError(await mine.create({ entity: ['ent_x'] }), 400, 'invalid_request', 'entity');
    expectPlatformError(await mine.create({ external_user_id: 'a' }), 400, 'invalid_request', 'issuer');
    expectPlatformError(await mine.create({ entity: rel.entity, external_user_id: 'a' }), 400, 'invalid_request', 'external_user_id');
    expectPlatformError(await mine.create({ external_user_id: 'a', issuer: idp, brand: 'x' }), 400, 'invalid_request', 'brand');
    expectPlatformError(await mine.get('/relationships?status=gone'), 400, 'invalid_request', 'status');
    expectPlatformError(await mine.get('/relationships?limit=0'), 400, 'invalid_request', 'limit');
    expectPlatformError(await mine.get('/relationships?entity=a%00b'), 400, 'invalid_request', 'entity');
    const g = await t.http.graphql(`mutation { endRelationship(id: "${rel.id}") { id } }`, {}, { token: mine.token });
    expectGraphQLError(g, 'resource_missing');
    const n = await t.http.graphql(`{ node(id: "${rel.id}") { id } }`, {}, { token: mine.token });
    expect(n.body.data.node).toBeNull();
    // Scopes: reading needs relationships:read, writing relationships:write.
    const reader = await tenant(['relationships:read']);
    expectPlatformError(await reader.create({ external_user_id: 'a', issuer: idp }), 403, 'missing_scope');
    expectStatus(await reader.get('/relationships'), 200);
    expectPlatformError(await reader.get('/entities'), 403, 'missing_scope');
  });

  test('Idempotency-Key: a replayed create answers the first relationship, not a conflict; a replayed move replays', async () => {
    const { create, move } = await tenant();
    const key = { 'idempotency-key': randomUUID() };
    const first = expectStatus(await create({ external_user_id: 'k', issuer: idp }, key), 201);
    const again = await create({ external_user_id: 'k', issuer: idp }, key);
    expect(again.status, again.text).toBe(201);
    expect(again.body).toEqual(first);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const moveKey = { 'idempotency-key': randomUUID() };
    const activated = expectStatus(await move(first.id, 'activate', moveKey), 200);
    expect(expectStatus(await move(first.id, 'activate', moveKey), 200)).toEqual(activated);
  });

  test('endpoints subscribed to the legacy program_member.* spellings receive the canonical relationship.* events', async () => {
    const { create, move, token } = await tenant();
    const legacy = await createEndpoint(t, token, {
      url: 'http://127.0.0.1:9/legacy',
      enabled_events: ['program_member.created', 'program_member.ended'],
    });
    const rel = expectStatus(await create({ external_user_id: randomUUID(), issuer: idp }), 201);
    expectStatus(await move(rel.id, 'activate'), 200);
    expectStatus(await move(rel.id, 'end'), 200);
    await t.app.sequencer.flush();
    await settle(t);
    const deliveries = await listDeliveries(t, token, legacy.id);
    expect(deliveries.map((d: any) => d.event_type).sort()).toEqual(['relationship.created', 'relationship.ended']);
  });

  test('every relationship.* type of the public vocabulary is produced by a real route', async () => {
    const { create, move, token } = await tenant();
    const rel = expectStatus(await create({ external_user_id: randomUUID(), issuer: idp }), 201);
    for (const verb of ['activate', 'pause', 'resume', 'end']) expectStatus(await move(rel.id, verb), 200);
    const produced = new Set((await feedEvents(t, token)).map((e) => e.type));
    const vocabulary = PUBLIC_EVENT_TYPES.filter((type) => type.startsWith('relationship.'));
    expect(vocabulary).toHaveLength(5);
    for (const type of vocabulary) expect(produced.has(type), type).toBe(true);
  });
});

describe('entities', () => {
  test('list newest first, filtered by external_user_id with issuer, paged; retrieve with identities and summary', async () => {
    const { a, create, get, org, token } = await tenant();
    const { enrollment, entity, program } = await activeEnrollment(a, { subject: { external_user_id: 'first', issuer: idp } });
    expectStatus(await a.assert({ entity, key: 'verified' }), 201);
    expectStatus(await a.assert({ entity, key: 'age_checked', expires_at: new Date(t.clock.now().getTime() + 60_000).toISOString() }), 201);
    expectStatus(await a.assert({ entity, key: 'gone' }), 201);
    expectStatus(await a.revoke({ entity, key: 'gone' }), 201);
    const rel = expectStatus(await create({ entity }), 201);
    // The other brand's relationship is not in this brand's summary.
    expectStatus(await create({ entity }, { 'service-brand': org.brands[1]!.id }), 201);
    const later = expectStatus(await create({ external_user_id: 'second', issuer: idp }), 201);
    const one = expectStatus(await get(`/entities/${entity}`), 200);
    expect(one).toEqual({
      id: entity,
      object: 'entity',
      identities: [{ external_user_id: 'first', issuer: idp }],
      claims: ['age_checked', 'verified'],
      enrollments: [{ id: enrollment.id, program: program.id, status: 'active', standing: 'qualified' }],
      relationships: [{ id: rel.id, brand: rel.brand, status: 'created' }],
      created_at: expect.any(String),
    });
    // An expired claim is no longer current.
    t.clock.advance(61_000);
    expect(expectStatus(await get(`/entities/${entity}`), 200).claims).toEqual(['verified']);
    const list = expectStatus(await get('/entities'), 200);
    expect(list.data.map((e: any) => e.id)).toEqual([later.entity, entity]);
    expect(list.data[1]).toEqual(expectStatus(await get(`/entities/${entity}`), 200));
    const page = expectStatus(await get('/entities?limit=1'), 200);
    expect(page).toMatchObject({ object: 'list', has_more: true });
    expect(expectStatus(await get(`/entities?limit=1&starting_after=${page.data[0].id}`), 200).data.map((e: any) => e.id)).toEqual([
      entity,
    ]);
    const q = (u: string) => `/entities?external_user_id=${u}&issuer=${encodeURIComponent(idp)}`;
    expect(expectStatus(await get(q('second')), 200).data.map((e: any) => e.id)).toEqual([later.entity]);
    expect(expectStatus(await get(q('nobody')), 200).data).toEqual([]);
    expectPlatformError(await get('/entities?external_user_id=first'), 400, 'invalid_request', 'issuer');
    expectPlatformError(await get(`/entities?issuer=${idp}`), 400, 'invalid_request', 'external_user_id');
    expectPlatformError(await get('/entities?external_user_id=a%00&issuer=x'), 400, 'invalid_request', 'external_user_id');
    expectPlatformError(await get('/entities/ent_nope'), 404, 'resource_missing');
    expectPlatformError(await get('/entities?starting_after=ent_nope'), 404, 'resource_missing', 'starting_after');
    // GraphQL: the same entities, and node(id:).
    const g = await t.http.graphql(
      `{ entities(externalUserId: "first", issuer: "${idp}") { edges { node { id identities { externalUserId issuer } claims enrollments { id status standing } relationships { id brand status } } } }
         entity(id: "${entity}") { id claims }
         node(id: "${entity}") { ... on Entity { id } } }`,
      {},
      { token },
    );
    expect(g.body.errors, g.text).toBeUndefined();
    expect(g.body.data.entities.edges[0].node).toEqual({
      id: entity,
      identities: [{ externalUserId: 'first', issuer: idp }],
      claims: ['verified'],
      enrollments: [{ id: enrollment.id, status: 'ACTIVE', standing: 'QUALIFIED' }],
      relationships: [{ id: rel.id, brand: rel.brand, status: 'CREATED' }],
    });
    expect(g.body.data.entity).toEqual({ id: entity, claims: ['verified'] });
    expect(g.body.data.node).toEqual({ id: entity });
    const bad = await t.http.graphql('{ entities(externalUserId: "first") { edges { cursor } } }', {}, { token });
    expect(expectGraphQLError(bad, 'invalid_request').extensions.param).toBe('issuer');
  });

  test.skipIf(!onPostgres())('a page of entities reads its summaries in a fixed number of queries, whatever its size', async () => {
    const { a, create, get } = await tenant();
    /** The queries of one page naming any of its entities (PostgreSQL: counted at the driver). */
    const count = async () => {
      const spy = vi.spyOn(pg.Client.prototype, 'query');
      try {
        const page = expectStatus(await get('/entities?limit=100'), 200);
        const ids: string[] = page.data.map((e: any) => e.id);
        return spy.mock.calls.filter(([q, params]) => {
          const text = JSON.stringify([q, params ?? null]);
          return ids.some((id) => text.includes(id));
        }).length;
      } finally {
        spy.mockRestore();
      }
    };
    for (let i = 0; i < 2; i++) expectStatus(await create({ external_user_id: `s${i}`, issuer: idp }), 201);
    const small = await count();
    expect(small).toBeGreaterThan(0);
    for (let i = 0; i < 6; i++) {
      const r = expectStatus(await create({ external_user_id: `l${i}`, issuer: idp }), 201);
      expectStatus(await a.assert({ entity: r.entity, key: 'verified' }), 201);
    }
    expect(await count()).toBe(small);
  });
});
