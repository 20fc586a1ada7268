import { describe, expect } from 'vitest';
import { startMaintenance } from '../../src/workers/maintenance.ts';
import { appTest, buildOrg, buildToken, expectPlatformError, type TestApp } from '../support/kit.ts';
import { buildConnectBrand, connect, hsHandoff, join, signHandoff, status } from '../support/connect.ts';
import {
  connectSessionOfEntity,
  connectionsOfEntity,
  countConnectSessions,
  countConnectionsOfAccount,
  countRedemptions,
  countRelationships,
} from '../support/db-access.ts';

/** Partner connect: join (handoff verification and redemption), status and connect with a connect session. */
// Every request comes from 127.0.0.1 and the fake clock stands still: the per-IP limit is lifted here (rate-limits.test.ts proves it).
const test = appTest({
  config: { connectRateLimits: { key: { perSecond: 1000, burst: 10_000 }, ip: { perSecond: 1000, burst: 10_000 } } },
});
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const MIN = 60_000;

describe('join → status → connect', () => {
  test('join finds or creates the entity, relationship and pending enrollment and answers a session; status and connect use it', async () => {
    const b = await buildConnectBrand(t);
    const res = await join(t, b.pk, await hsHandoff(t, b, { sub: 'user-42' }));
    expect(res.status, res.text).toBe(200);
    const { session, status: st } = res.body;
    expect(session).toMatch(/^cs_[0-9A-Za-z]{36}$/);
    expect(st).toMatchObject({
      object: 'connect_status',
      brand: { id: b.brandId, display_name: 'Shop' },
      entity: expect.stringMatching(/^ent_/),
      relationship: { id: expect.stringMatching(/^rel_/), status: 'created' },
      enrollment: { id: expect.stringMatching(/^enr_/), program: b.programId, status: 'pending' },
      connections: [],
    });
    expect(new Date(st.session_expires_at).getTime()).toBe(t.clock.now().getTime() + 30 * MIN);
    // Identity = sub + issuer, as the brand's own routes see it; the events as usual.
    const auth = { token: b.sk };
    const ent = await t.http.get(`/v1/platform/entities?external_user_id=user-42&issuer=${b.hs.id}`, auth);
    expect(ent.body.data.map((e: any) => e.id)).toEqual([st.entity]);
    const events = await t.http.get('/v1/platform/events?limit=100', auth);
    expect(events.body.data.map((e: any) => e.type)).toEqual(expect.arrayContaining(['relationship.created', 'enrollment.created']));
    // Only a hash of the session is stored.
    const row = await connectSessionOfEntity(t, st.entity);
    expect(JSON.stringify(row)).not.toContain(session.slice(3));

    const seen = await status(t, b.pk, session);
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body).toEqual(st);

    const made = await connect(t, b.pk, session, { provider: 'youtube', account_id: 'UC123' });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({
      object: 'connection',
      entity: st.entity,
      brand: b.brandId,
      provider: 'youtube',
      account_id: 'UC123',
    });
    expect((await status(t, b.pk, session)).body.connections).toEqual([
      { id: made.body.id, provider: 'youtube', account_id: 'UC123', status: 'active' },
    ]);
    const listed = await t.http.get(`/v1/platform/connections?entity=${st.entity}`, auth);
    expect(listed.body.data.map((c: any) => c.id)).toEqual([made.body.id]);
    expectPlatformError(await connect(t, b.pk, session, { provider: 'youtube', account_id: 'UC123' }), 409, 'resource_conflict');
  });

  test('joining again with a new handoff for the same user → the same entity, relationship and enrollment, a new session', async () => {
    const b = await buildConnectBrand(t);
    const first = await join(t, b.pk, await hsHandoff(t, b, { sub: 'again' }));
    const second = await join(t, b.pk, await signHandoff(t, { alg: 'EdDSA', privateKey: b.ed.privateKey }, { iss: b.ed.id, sub: 'again' }));
    expect(first.status, first.text).toBe(200);
    expect(second.status, second.text).toBe(200);
    expect(second.body.session).not.toBe(first.body.session);
    // The EdDSA issuer is another issuer: another identity. The same issuer again: the same one.
    expect(second.body.status.entity).not.toBe(first.body.status.entity);
    const third = await join(t, b.pk, await hsHandoff(t, b, { sub: 'again' }));
    expect(third.body.status.entity).toBe(first.body.status.entity);
    expect(third.body.status.relationship).toEqual(first.body.status.relationship);
    expect(third.body.status.enrollment).toEqual(first.body.status.enrollment);
    // Both sessions work.
    expect((await status(t, b.pk, first.body.session)).status).toBe(200);
    expect((await status(t, b.pk, third.body.session)).status).toBe(200);
  });

  test('no default program → 409 connect_not_configured, and the handoff is not spent', async () => {
    const b = await buildConnectBrand(t, { defaultProgram: false });
    const handoff = await hsHandoff(t, b);
    expectPlatformError(await join(t, b.pk, handoff), 409, 'connect_not_configured');
    await t.http.post('/v1/platform/connect_config', { default_program: b.programId }, { token: b.sk });
    expect((await join(t, b.pk, handoff)).status).toBe(200);
  });
});

describe('handoff verification', () => {
  test('bad signature, wrong alg, expired, exp too far, missing claims, unknown or another organization’s issuer → 400 in the envelope', async () => {
    const b = await buildConnectBrand(t);
    const other = await buildConnectBrand(t);
    const now = Math.floor(t.clock.now().getTime() / 1000);
    const hs = (claims = {}) => hsHandoff(t, b, claims);
    const good = await hs();
    const [h, p, s] = good.split('.');
    const flipped = `${h}.${p}.${s!.slice(0, -2)}${s!.endsWith('AA') ? 'BB' : 'AA'}`;
    const cases: [string, string, string][] = [
      ['bad signature', flipped, 'handoff_invalid'],
      ['signed with another secret', await signHandoff(t, { alg: 'HS256', secret: 'x'.repeat(40) }, { iss: b.hs.id }), 'handoff_invalid'],
      [
        'wrong alg (EdDSA token for an HS256 issuer)',
        await signHandoff(t, { alg: 'EdDSA', privateKey: b.ed.privateKey }, { iss: b.hs.id }),
        'handoff_invalid',
      ],
      [
        'wrong alg (HS256 for an EdDSA issuer)',
        await signHandoff(t, { alg: 'HS256', secret: b.hs.secret }, { iss: b.ed.id }),
        'handoff_invalid',
      ],
      ['alg none', `${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.`, 'handoff_invalid'],
      ['expired', await hs({ iat: now - 400, exp: now - 60 }), 'handoff_expired'],
      ['exp more than 10 minutes after now', await hs({ iat: undefined, exp: now + 11 * 60 }), 'handoff_invalid'],
      ['exp more than 10 minutes after iat', await hs({ iat: now - 120, exp: now + 9 * 60 }), 'handoff_invalid'],
      ['no exp', await hs({ exp: undefined }), 'handoff_invalid'],
      ['exp not a number', await hs({ exp: String(now + 60) }), 'handoff_invalid'],
      ['iat in the future', await hs({ iat: now + 120, exp: now + 300 }), 'handoff_invalid'],
      ['no jti', await hs({ jti: undefined }), 'handoff_invalid'],
      ['jti not a string', await hs({ jti: 7 }), 'handoff_invalid'],
      ['no sub', await hs({ sub: undefined }), 'handoff_invalid'],
      ['sub with NUL', await hs({ sub: 'a\u0000b' }), 'handoff_invalid'],
      ['sub with a lone surrogate', await hs({ sub: 'a\ud800b' }), 'handoff_invalid'],
      ['sub too long', await hs({ sub: 'u'.repeat(256) }), 'handoff_invalid'],
      ['unknown issuer', await hs({ iss: 'iss_00000000000000000000000000000000' }), 'handoff_invalid'],
      ['no iss', await hs({ iss: undefined }), 'handoff_invalid'],
      [
        'another organization’s issuer',
        await signHandoff(t, { alg: 'HS256', secret: other.hs.secret }, { iss: other.hs.id }),
        'handoff_invalid',
      ],
      ['not a JWS', 'hello', 'handoff_invalid'],
      ['payload not JSON', `${h}.${Buffer.from('nope').toString('base64url')}.${s}`, 'handoff_invalid'],
      ['huge', `${h}.${'A'.repeat(5000)}.${s}`, 'invalid_request'],
    ];
    for (const [what, handoff, code] of cases) {
      const res = await join(t, b.pk, handoff);
      expectPlatformError(res, 400, code, 'handoff');
      expect(res.body.error.message, what).not.toMatch(/hmac|digest|byte|offset/i);
    }
    // None of them created anything.
    expect(await countConnectSessions(t, b.pkId)).toBe(0);
    expect((await join(t, b.pk, good)).status).toBe(200);
  });

  test('within 30 s of clock skew a just-expired handoff still verifies; past it, it is expired (fake clock)', async () => {
    const b = await buildConnectBrand(t);
    const now = Math.floor(t.clock.now().getTime() / 1000);
    const soon = await hsHandoff(t, b, { exp: now + 60 });
    const later = await hsHandoff(t, b, { exp: now + 60 });
    t.clock.advance(80_000);
    expect((await join(t, b.pk, soon)).status).toBe(200);
    t.clock.advance(20_000);
    expectPlatformError(await join(t, b.pk, later), 400, 'handoff_expired', 'handoff');
  });

  test('rotated HS256 secret: the previous one verifies within the 24 h overlap, not after', async () => {
    const b = await buildConnectBrand(t);
    const rotated = await t.http.post(`/v1/platform/handoff/issuers/${b.hs.id}/rotate`, {}, { token: b.sk });
    expect(rotated.status, rotated.text).toBe(200);
    const withOld = () => signHandoff(t, { alg: 'HS256', secret: b.hs.secret }, { iss: b.hs.id });
    const withNew = () => signHandoff(t, { alg: 'HS256', secret: rotated.body.secret }, { iss: b.hs.id });
    expect((await join(t, b.pk, await withOld())).status).toBe(200);
    expect((await join(t, b.pk, await withNew())).status).toBe(200);
    t.clock.advance(24 * 60 * MIN + 1000);
    expectPlatformError(await join(t, b.pk, await withOld()), 400, 'handoff_invalid', 'handoff');
    expect((await join(t, b.pk, await withNew())).status).toBe(200);
  });

  test('a deleted issuer’s handoffs no longer verify', async () => {
    const b = await buildConnectBrand(t);
    const handoff = await hsHandoff(t, b);
    await t.http.request('DELETE', `/v1/platform/handoff/issuers/${b.hs.id}`, undefined, { token: b.sk });
    expectPlatformError(await join(t, b.pk, handoff), 400, 'handoff_invalid', 'handoff');
  });
});

describe('replay', () => {
  test('a handoff redeems once: a second join is 409 handoff_replayed', async () => {
    const b = await buildConnectBrand(t);
    const handoff = await hsHandoff(t, b);
    expect((await join(t, b.pk, handoff)).status).toBe(200);
    expectPlatformError(await join(t, b.pk, handoff), 409, 'handoff_replayed', 'handoff');
  });

  test('10 concurrent joins with one handoff: exactly one succeeds, the others are 409 handoff_replayed', async () => {
    const b = await buildConnectBrand(t);
    const handoff = await hsHandoff(t, b, { sub: 'racer' });
    const results = await Promise.all(Array.from({ length: 10 }, () => join(t, b.pk, handoff)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses, JSON.stringify(results.map((r) => r.text))).toEqual([200, ...Array(9).fill(409)]);
    for (const r of results.filter((x) => x.status === 409)) expectPlatformError(r, 409, 'handoff_replayed');
    expect(await countConnectSessions(t, b.pkId)).toBe(1);
    expect(await countRelationships(t, b.brandId)).toBe(1);
  });
});

describe('Idempotency-Key', () => {
  test('connect: a retry with the key answers the same connection (Idempotent-Replayed), concurrent retries make one; another body with it is 409', async () => {
    const b = await buildConnectBrand(t);
    const { session, status: st } = (await join(t, b.pk, await hsHandoff(t, b, { sub: 'retrier' }))).body;
    const key = { 'idempotency-key': 'connect-retry-1' };
    const first = await connect(t, b.pk, session, { provider: 'youtube', account_id: 'UC-retry' }, key);
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await connect(t, b.pk, session, { account_id: 'UC-retry', provider: 'youtube' }, key);
    expect(again.status, again.text).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    // Without the key the same request is a new attempt: the account is connected already.
    expectPlatformError(await connect(t, b.pk, session, { provider: 'youtube', account_id: 'UC-retry' }), 409, 'resource_conflict');
    expectPlatformError(
      await connect(t, b.pk, session, { provider: 'youtube', account_id: 'UC-other' }, key),
      409,
      'idempotency_key_conflict',
      'Idempotency-Key',
    );
    const racing = { 'idempotency-key': 'connect-race' };
    const raced = await Promise.all(
      Array.from({ length: 6 }, () => connect(t, b.pk, session, { provider: 'twitch', account_id: 'tw-race' }, racing)),
    );
    const made = raced.filter((r) => r.status === 201);
    for (const r of raced.filter((x) => x.status !== 201)) expectPlatformError(r, 409, 'idempotency_key_in_use', 'Idempotency-Key');
    expect(made.length).toBeGreaterThan(0);
    expect(new Set(made.map((r) => r.body.id)).size).toBe(1);
    const rows = await connectionsOfEntity(t, st.entity);
    expect(rows.map((r) => r.accountId).sort()).toEqual(['UC-retry', 'tw-race']);
  });

  test('connect: keys are per session (another session of the same key may reuse one); a bad key is 400 and connects nothing', async () => {
    const b = await buildConnectBrand(t);
    const one = (await join(t, b.pk, await hsHandoff(t, b, { sub: 'user-a' }))).body;
    const two = (await join(t, b.pk, await hsHandoff(t, b, { sub: 'user-b' }))).body;
    const key = { 'idempotency-key': 'same-key' };
    const a = await connect(t, b.pk, one.session, { provider: 'youtube', account_id: 'UC-a' }, key);
    const c = await connect(t, b.pk, two.session, { provider: 'youtube', account_id: 'UC-b' }, key);
    expect([a.status, c.status], a.text + c.text).toEqual([201, 201]);
    expect(c.body.entity).toBe(two.status.entity);
    expect(c.headers.get('idempotent-replayed')).toBeNull();
    for (const bad of ['x'.repeat(256), 'caf\u00e9', 'two words']) {
      const res = await connect(t, b.pk, one.session, { provider: 'twitch', account_id: 'tw-bad' }, { 'idempotency-key': bad });
      expectPlatformError(res, 400, 'invalid_request', 'Idempotency-Key');
    }
    expect(await countConnectionsOfAccount(t, 'tw-bad')).toBe(0);
  });

  test('join: a key is refused 400 before the handoff is spent (it cannot be replayed: the session is shown once)', async () => {
    const b = await buildConnectBrand(t);
    const handoff = await hsHandoff(t, b, { sub: 'keyed-join' });
    expectPlatformError(await join(t, b.pk, handoff, { 'idempotency-key': 'join-1' }), 400, 'invalid_request', 'Idempotency-Key');
    expect(await countConnectSessions(t, b.pkId)).toBe(0);
    expect((await join(t, b.pk, handoff)).status).toBe(200);
  });
});

describe('sessions', () => {
  test('a session in the query string is refused 400; a missing, unknown or expired one is 401', async () => {
    const b = await buildConnectBrand(t);
    const { session } = (await join(t, b.pk, await hsHandoff(t, b))).body;
    expectPlatformError(
      await t.http.get(`/v1/platform/connect/status?session=${session}`, { token: b.pk, headers: { 'connect-session': session } }),
      400,
      'invalid_request',
      'Connect-Session',
    );
    expectPlatformError(await t.http.get('/v1/platform/connect/status', { token: b.pk }), 401, 'invalid_token', 'Connect-Session');
    expectPlatformError(await status(t, b.pk, `cs_${'A'.repeat(36)}`), 401, 'invalid_token');
    expectPlatformError(await status(t, b.pk, 'sk_platform_live_x'), 401, 'invalid_token');
    t.clock.advance(30 * MIN);
    expectPlatformError(await status(t, b.pk, session), 401, 'invalid_token');
    expectPlatformError(await connect(t, b.pk, session, { provider: 'youtube', account_id: 'x' }), 401, 'invalid_token');
  });

  test('a session works only with its own key: another key of the brand, another brand’s or organization’s key → 401', async () => {
    const b = await buildConnectBrand(t);
    const { session } = (await join(t, b.pk, await hsHandoff(t, b))).body;
    const mk = async (brand: string, org = b.org) =>
      (await t.http.post('/platform/tokens/create', { name: 'x', kind: 'publishable', brand }, { token: org.userToken })).body.secret;
    const other = await buildConnectBrand(t);
    for (const pk of [await mk('main'), await mk('second'), other.pk]) {
      expectPlatformError(await status(t, pk, session), 401, 'invalid_token');
      expectPlatformError(await connect(t, pk, session, { provider: 'youtube', account_id: 'x' }), 401, 'invalid_token');
    }
    expect((await status(t, b.pk, session)).status).toBe(200);
  });

  test('revoking the key ends its sessions (401) and the key itself is 401', async () => {
    const b = await buildConnectBrand(t);
    const { session } = (await join(t, b.pk, await hsHandoff(t, b))).body;
    const revoked = await t.http.post('/platform/tokens/revoke', { token_id: b.pkId }, { token: b.org.userToken });
    expect(revoked.status).toBe(200);
    expectPlatformError(await status(t, b.pk, session), 401, 'invalid_token');
    expectPlatformError(await join(t, b.pk, await hsHandoff(t, b)), 401, 'invalid_token');
  });
});

describe('keys on the connect routes', () => {
  test('a secret key is 403 secret_key_not_allowed; no key 401; pk_test_ 400; garbage pk 401', async () => {
    const org = await buildOrg(t);
    const sk = await buildToken(t, org, ['connections:write']);
    for (const [method, path] of [
      ['POST', '/v1/platform/connect/join'],
      ['GET', '/v1/platform/connect/status'],
      ['POST', '/v1/platform/connect/connect'],
    ] as const) {
      const send = (token?: string) => t.http.request(method, path, method === 'POST' ? {} : undefined, { token });
      expectPlatformError(await send(sk.secret), 403, 'secret_key_not_allowed');
      expectPlatformError(await send(), 401, 'platform_token_required');
      expectPlatformError(await send('pk_test_abc'), 400, 'test_mode_not_yet_available');
      expectPlatformError(await send(`pk_live_${'A'.repeat(36)}`), 401, 'invalid_token');
    }
    expectPlatformError(await t.http.request('PUT', '/v1/platform/connect/join', {}, {}), 405, 'method_not_allowed');
  });

  test('hostile bodies → 4xx, never 500', async () => {
    const b = await buildConnectBrand(t);
    const { session } = (await join(t, b.pk, await hsHandoff(t, b))).body;
    for (const body of [
      {},
      { handoff: 7 },
      { handoff: null },
      { handoff: ['a.b.c'] },
      { handoff: 'a.b.c', extra: 1 },
      [],
      'x',
      { handoff: 'a\u0000.b.c' },
    ]) {
      const res = await t.http.post('/v1/platform/connect/join', body, { token: b.pk });
      expect(res.status, res.text).toBeGreaterThanOrEqual(400);
      expect(res.status, res.text).toBeLessThan(500);
    }
    for (const body of [
      {},
      { provider: 'YouTube', account_id: 'x' },
      { provider: 'youtube', account_id: 'a\u0000' },
      { provider: 'youtube', account_id: 5 },
      { provider: 'youtube', account_id: 'x', entity: 'ent_x' },
    ]) {
      const res = await connect(t, b.pk, session, body);
      expect(res.status, res.text).toBe(400);
    }
    const huge = await t.http.get('/v1/platform/connect/status', {
      token: b.pk,
      headers: { 'connect-session': `cs_${'A'.repeat(20_000)}` },
    });
    expect(huge.status).toBeGreaterThanOrEqual(400);
    expect(huge.status).toBeLessThan(500);
  });
});

describe('kill switch', () => {
  test('engaged, the connect routes answer 503 developer_access_paused like every Surface B route', async () => {
    const b = await buildConnectBrand(t);
    const set = (engaged: boolean) => t.http.post('/operator/kill_switch', { engaged }, { token: t.operatorToken });
    expect((await set(true)).status).toBe(200);
    try {
      expectPlatformError(await join(t, b.pk, await hsHandoff(t, b)), 503, 'developer_access_paused');
      expectPlatformError(await status(t, b.pk, `cs_${'A'.repeat(36)}`), 503, 'developer_access_paused');
    } finally {
      expect((await set(false)).status).toBe(200);
    }
    expect((await join(t, b.pk, await hsHandoff(t, b))).status).toBe(200);
  });
});

describe('housekeeping', () => {
  test('maintenance purges expired sessions and redemptions of handoffs that can no longer verify, and nothing live', async () => {
    const b = await buildConnectBrand(t);
    await join(t, b.pk, await hsHandoff(t, b, { exp: Math.floor(t.clock.now().getTime() / 1000) + 60 }));
    const maintenance = startMaintenance(t.app.deps, 3_600_000);
    try {
      await maintenance.runOnce();
      expect(await countConnectSessions(t, b.pkId)).toBe(1);
      expect(await countRedemptions(t, b.hs.id)).toBe(1);
      t.clock.advance(31 * MIN);
      await maintenance.runOnce();
      expect(await countConnectSessions(t, b.pkId)).toBe(0);
      expect(await countRedemptions(t, b.hs.id)).toBe(0);
    } finally {
      maintenance.stop();
    }
  });
});
