import { describe, expect } from 'vitest';
import { appTest, type TestApp } from '../support/kit.ts';
import { ASRT, ENT, expectStatus, setup } from './helpers.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const subject = () => ({ external_user_id: `user-${Math.random().toString(36).slice(2)}`, issuer: 'https://idp.example' });
const inHours = (h: number) => new Date(t.clock.now().getTime() + h * 3600_000).toISOString();

describe('Assertion claim state table', () => {
  test('absent → present: create answers 201 with the assertion event, appends assertion.created with entity and key', async () => {
    const { api } = await setup(t);
    const res = await api.assert({ ...subject(), key: 'verified', value: true });
    const body = expectStatus(res, 201);
    expect(body).toEqual({
      id: expect.stringMatching(ASRT),
      object: 'assertion',
      entity: expect.stringMatching(ENT),
      key: 'verified',
      action: 'asserted',
      value: 1,
      expires_at: null,
      effective_at: t.clock.now().toISOString(),
      livemode: true,
      created_at: expect.stringMatching(ISO),
    });
    const events = await api.events('assertion.created');
    expect(events).toHaveLength(1);
    expect(events[0].subject).toEqual({ type: 'assertion', id: body.id });
    expect(events[0].data).toMatchObject({ id: body.id, entity: body.entity, key: 'verified', value: 1, action: 'asserted' });
  });

  test('present, same value and same expiry: 200 with the current event, nothing appended', async () => {
    const { api } = await setup(t);
    const s = subject();
    const expires_at = inHours(2);
    const first = expectStatus(await api.assert({ ...s, key: 'score', value: 7, expires_at }), 201);
    const again = await api.assert({ ...s, key: 'score', value: 7, expiresAt: expires_at });
    expect(expectStatus(again, 200)).toEqual(first);
    expect(await api.events('assertion.created')).toHaveLength(1);
  });

  test('present, same value, new expires_at: the refresh is a new event (201) and emits assertion.created', async () => {
    const { api } = await setup(t);
    const s = subject();
    const first = expectStatus(await api.assert({ ...s, key: 'verified', value: true, expires_at: inHours(1) }), 201);
    const refreshed = expectStatus(await api.assert({ ...s, key: 'verified', value: true, expires_at: inHours(3) }), 201);
    expect(refreshed.id).not.toBe(first.id);
    expect(refreshed.expires_at).toBe(inHours(3));
    expect((await api.events('assertion.created')).map((e) => e.data.id)).toEqual([first.id, refreshed.id]);
  });

  test('present, new value: 201 and a new event; false is stored as 0', async () => {
    const { api } = await setup(t);
    const s = subject();
    expectStatus(await api.assert({ ...s, key: 'verified', value: true }), 201);
    const off = expectStatus(await api.assert({ ...s, key: 'verified', value: false }), 201);
    expect(off.value).toBe(0);
    const num = expectStatus(await api.assert({ ...s, key: 'followers', value: 1234.5 }), 201);
    expect(num.value).toBe(1234.5);
  });

  test('present → absent: revoke answers 201 with the appended revoked event and emits assertion.revoked', async () => {
    const { api } = await setup(t);
    const s = subject();
    const created = expectStatus(await api.assert({ ...s, key: 'verified', value: true }), 201);
    const res = expectStatus(await api.revoke({ ...s, key: 'verified' }), 201);
    expect(res).toMatchObject({ object: 'assertion_revocation', entity: created.entity, key: 'verified', revoked: true });
    expect(res.assertion).toMatchObject({
      id: expect.stringMatching(ASRT),
      action: 'revoked',
      value: null,
      entity: created.entity,
      key: 'verified',
    });
    const revoked = await api.events('assertion.revoked');
    expect(revoked.map((e) => e.data)).toEqual([res.assertion]);
    expect(expectStatus(await api.list(s), 200).data).toEqual([]);
    // History is never rewritten: the original event is still addressable.
    expect(expectStatus(await api.event(created.id), 200)).toEqual(created);
  });

  test('absent → absent: revoke answers 200 and appends nothing (never stated, already revoked, unknown external user)', async () => {
    const { api } = await setup(t);
    const s = subject();
    expectStatus(await api.assert({ ...s, key: 'other', value: 1 }), 201);
    expect(expectStatus(await api.revoke({ ...s, key: 'verified' }), 200)).toMatchObject({ revoked: false, assertion: null });
    expectStatus(await api.assert({ ...s, key: 'verified', value: 1 }), 201);
    expectStatus(await api.revoke({ ...s, key: 'verified' }), 201);
    expect(expectStatus(await api.revoke({ ...s, key: 'verified' }), 200)).toMatchObject({ revoked: false, assertion: null });
    expect(expectStatus(await api.revoke({ ...subject(), key: 'verified' }), 200)).toEqual({
      object: 'assertion_revocation',
      entity: null,
      key: 'verified',
      revoked: false,
      assertion: null,
    });
    expect(await api.events('assertion.revoked')).toHaveLength(1);
  });

  test('present → time reaches expires_at: reads as absent with no event; include_expired shows it; revoke is then a 200 no-op', async () => {
    const { api } = await setup(t);
    const s = subject();
    const created = expectStatus(await api.assert({ ...s, key: 'verified', value: true, expires_at: inHours(1) }), 201);
    expect(expectStatus(await api.list(s), 200).data).toEqual([created]);
    t.clock.advance(3600_000);
    expect(expectStatus(await api.list(s), 200).data).toEqual([]);
    expect(expectStatus(await api.list({ ...s, include_expired: true }), 200).data).toEqual([created]);
    expect(expectStatus(await api.revoke({ ...s, key: 'verified' }), 200)).toMatchObject({ revoked: false });
    // Stating it again after expiry is a change (absent → present).
    expectStatus(await api.assert({ ...s, key: 'verified', value: true }), 201);
    const events = await api.events();
    expect(events.map((e) => e.type)).toEqual(['assertion.created', 'assertion.created']);
  });
});

describe('subjects and entities', () => {
  test('external_user_id + issuer resolves to one ent_ entity, created on first use; entity id addresses the same claims', async () => {
    const { api } = await setup(t);
    const s = subject();
    const a = expectStatus(await api.assert({ ...s, key: 'a', value: 1 }), 201);
    const b = expectStatus(await api.assert({ externalUserId: s.external_user_id, issuer: s.issuer, key: 'b', value: 2 }), 201);
    expect(b.entity).toBe(a.entity);
    const c = expectStatus(await api.assert({ entity: a.entity, key: 'c', value: 3 }), 201);
    expect(c.entity).toBe(a.entity);
    const other = expectStatus(
      await api.assert({ external_user_id: s.external_user_id, issuer: 'https://other-idp.example', key: 'a', value: 1 }),
      201,
    );
    expect(other.entity).not.toBe(a.entity);
    const list = expectStatus(await api.list({ entity: a.entity }), 200);
    expect(list).toEqual({ object: 'list', data: [a, b, c], has_more: false });
  });
});

describe('GET /assertions', () => {
  test('lists current claims ordered by key, filters by key, pages with limit and starting_after', async () => {
    const { api } = await setup(t);
    const s = subject();
    const made = [];
    for (const key of ['delta', 'alpha', 'charlie', 'bravo']) made.push(expectStatus(await api.assert({ ...s, key, value: 1 }), 201));
    const byKey = [...made].sort((x, y) => x.key.localeCompare(y.key));
    const page1 = expectStatus(await api.list({ ...s, limit: 2 }), 200);
    expect(page1).toEqual({ object: 'list', data: byKey.slice(0, 2), has_more: true });
    const page2 = expectStatus(await api.list({ ...s, limit: 2, startingAfter: page1.data[1].id }), 200);
    expect(page2).toEqual({ object: 'list', data: byKey.slice(2), has_more: false });
    expect(expectStatus(await api.list({ ...s, key: 'charlie' }), 200).data).toEqual([byKey[2]]);
    // The claim's newest event is what lists: a new value replaces the old event in the list.
    const newer = expectStatus(await api.assert({ ...s, key: 'alpha', value: 5 }), 201);
    expect(expectStatus(await api.list({ ...s, key: 'alpha' }), 200).data).toEqual([newer]);
  });

  test('an external pair never seen lists nothing (and creates no entity)', async () => {
    const { api } = await setup(t);
    expect(expectStatus(await api.list(subject()), 200)).toEqual({ object: 'list', data: [], has_more: false });
  });
});

describe('Idempotency-Key', () => {
  test('a replayed create answers the stored response and appends nothing', async () => {
    const { api } = await setup(t);
    const body = { ...subject(), key: 'verified', value: true };
    const first = await api.assert(body, { 'Idempotency-Key': 'k-1' });
    expect(first.status).toBe(201);
    const replay = await api.assert(body, { 'Idempotency-Key': 'k-1' });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    const conflict = await api.assert({ ...body, value: false }, { 'Idempotency-Key': 'k-1' });
    expect(conflict.status).toBe(409);
    expect(await api.events('assertion.created')).toHaveLength(1);
  });

  test('a replay answers the status the key first answered: 200 stays 200 after the claim changed', async () => {
    const { api } = await setup(t);
    const s = subject();
    const body = { ...s, key: 'verified' };
    expect((await api.assert(body)).status).toBe(201);
    const unchanged = await api.assert(body, { 'Idempotency-Key': 'k-same' });
    expect(unchanged.status).toBe(200);
    const absent = await api.revoke({ ...s, key: 'never' }, { 'Idempotency-Key': 'k-absent' });
    expect(absent.status).toBe(200);
    expect((await api.revoke(body)).status).toBe(201);
    const replayed = await api.assert(body, { 'Idempotency-Key': 'k-same' });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(unchanged.body);
    const revokeReplayed = await api.revoke({ ...s, key: 'never' }, { 'Idempotency-Key': 'k-absent' });
    expect(revokeReplayed.status).toBe(200);
    expect(revokeReplayed.body).toEqual(absent.body);
  });

  test('a replay answers what the key first answered even when the request would now fail validation; a different request is still 409', async () => {
    const { api } = await setup(t);
    const body = { ...subject(), key: 'verified', expires_at: inHours(1) };
    const first = await api.assert(body, { 'Idempotency-Key': 'k-expiring' });
    expect(first.status).toBe(201);
    t.clock.advance(2 * 3600_000); // expires_at is now in the past: a new request with this body is 400
    expect((await api.assert(body)).status).toBe(400);
    const replay = await api.assert(body, { 'Idempotency-Key': 'k-expiring' });
    expect(replay.status, replay.text).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    const other = await api.assert({ ...body, key: 'other' }, { 'Idempotency-Key': 'k-expiring' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('idempotency_key_conflict');
  });

  test('10 concurrent creates with one key append one event and all answer its assertion', async () => {
    const { api } = await setup(t);
    const body = { ...subject(), key: 'verified' };
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.assert(body, { 'Idempotency-Key': 'k-race' })));
    for (const a of answers) expect(a.status, a.text).toBe(201);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(9);
    expect(await api.events('assertion.created')).toHaveLength(1);
  });
});
