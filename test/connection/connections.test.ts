import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { appTest, expectGraphQLError, expectPlatformError, type TestApp } from '../support/kit.ts';
import { ENT, expectStatus } from '../assertion/helpers.ts';
import {
  ALL_SCOPES,
  deployments,
  dist,
  drain,
  events,
  launch,
  op,
  operationsConfig,
  sandbox,
  tenant,
  typesOf,
} from '../operation/helpers.ts';

const test = appTest({ config: operationsConfig() });
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const P = '/v1/platform';
const CONN = /^conn_[0-9a-f]{32}$/;
const SCOPES = [...ALL_SCOPES, 'connections:read', 'connections:write', 'operations:read'];
const idp = 'https://idp.example';

async function who() {
  const w = await tenant(t, SCOPES);
  const opts = { token: w.token };
  return {
    ...w,
    create: (body: unknown) => t.http.post(`${P}/connections`, body, opts),
    revoke: (id: string) => t.http.post(`${P}/connections/${id}/revoke`, undefined, opts),
    get: (path: string) => t.http.get(`${P}${path}`, opts),
    connect: async (over: Record<string, unknown> = {}) =>
      expectStatus(
        await t.http.post(
          `${P}/connections`,
          {
            external_user_id: randomUUID(),
            issuer: idp,
            provider: 'sandbox',
            account_id: randomUUID(),
            grants: ['videos:publish'],
            ...over,
          },
          opts,
        ),
        201,
      ),
  };
}

describe('connections', () => {
  test('create, retrieve and list (filters entity, provider, status); one active per brand, entity, provider and account', async () => {
    const w = await who();
    const user = randomUUID();
    const conn = expectStatus(
      await w.create({
        external_user_id: user,
        issuer: idp,
        provider: 'youtube',
        account_id: 'UC123',
        grants: ['videos:read', 'analytics'],
      }),
      201,
    );
    expect(conn).toEqual({
      id: expect.stringMatching(CONN),
      object: 'connection',
      brand: w.brand,
      entity: expect.stringMatching(ENT),
      provider: 'youtube',
      account_id: 'UC123',
      grants: ['videos:read', 'analytics'],
      status: 'active',
      revoked_at: null,
      livemode: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(expectStatus(await w.get(`/connections/${conn.id}`), 200)).toEqual(conn);
    // The same account again for the same entity is a conflict, by either subject form.
    expectPlatformError(
      await w.create({ entity: conn.entity, provider: 'youtube', account_id: 'UC123' }),
      409,
      'resource_conflict',
      'account_id',
    );
    // Another account, another provider, or another entity is not.
    const other = expectStatus(await w.create({ entity: conn.entity, provider: 'tiktok', account_id: 'UC123' }), 201);
    expect(other.grants).toEqual([]);
    const third = await w.connect({ provider: 'youtube', account_id: 'UC123' });
    const all = (path: string) => w.get(path).then((r) => expectStatus(r, 200).data.map((c: { id: string }) => c.id));
    expect(await all('/connections')).toEqual([third.id, other.id, conn.id]);
    expect(await all(`/connections?entity=${conn.entity}`)).toEqual([other.id, conn.id]);
    expect(await all('/connections?provider=youtube')).toEqual([third.id, conn.id]);
    expect(await all(`/connections?limit=1&starting_after=${other.id}`)).toEqual([conn.id]);
    expect(await all('/connections?status=revoked')).toEqual([]);
  });

  test('revoke is final: 409 invalid_state_transition the second time; the account may then be connected again', async () => {
    const w = await who();
    const conn = await w.connect();
    const revoked = expectStatus(await w.revoke(conn.id), 200);
    expect(revoked).toEqual({
      connection: { ...conn, status: 'revoked', revoked_at: expect.any(String), updated_at: expect.any(String) },
      teardowns: [],
    });
    expectPlatformError(await w.revoke(conn.id), 409, 'invalid_state_transition');
    expect((await w.get('/connections?status=revoked')).body.data.map((c: { id: string }) => c.id)).toEqual([conn.id]);
    const again = expectStatus(await w.create({ entity: conn.entity, provider: conn.provider, account_id: conn.account_id }), 201);
    expect(again.id).not.toBe(conn.id);
  });

  test('bad input is 400 with the param; unknown ids are 404', async () => {
    const w = await who();
    const base = { external_user_id: 'u', issuer: idp, provider: 'youtube', account_id: 'a' };
    expectPlatformError(await w.create({ ...base, provider: 'YouTube' }), 400, 'invalid_request', 'provider');
    expectPlatformError(await w.create({ ...base, account_id: '' }), 400, 'invalid_request', 'account_id');
    expectPlatformError(await w.create({ ...base, grants: ['a', 'a'] }), 400, 'invalid_request', 'grants');
    expectPlatformError(await w.create({ ...base, grants: ['Bad grant'] }), 400, 'invalid_request', 'grants.0');
    expectPlatformError(await w.create({ ...base, extra: 1 }), 400, 'invalid_request');
    expectPlatformError(await w.create({ provider: 'youtube', account_id: 'a' }), 400, 'invalid_request', 'entity');
    expectPlatformError(await w.create({ entity: 'ent_nope', provider: 'youtube', account_id: 'a' }), 404, 'resource_missing', 'entity');
    expectPlatformError(await w.get('/connections/conn_nope'), 404, 'resource_missing');
    expectPlatformError(await w.get('/connections?status=gone'), 400, 'invalid_request', 'status');
    expectPlatformError(await w.revoke('conn_nope'), 404, 'resource_missing');
  });

  test('a deployment names a connection of its brand at the same provider; an unknown, revoked or mismatched one is refused', async () => {
    const w = await who();
    const conn = await w.connect();
    const { distribution } = await launch(t, w, { deployments: [{ ...sandbox(), connection: conn.id }, sandbox()] });
    await drain(t);
    const [first, second] = await deployments(t, w, distribution.id);
    expect([first.connection, second.connection]).toEqual([conn.id, null]);
    const refused = (connection: string) =>
      t.http.post(
        `${P}/distributions/validate`,
        { name: 'x', budget: 0, deployments: [sandbox(), { ...sandbox(), connection }] },
        { token: w.token },
      );
    expectPlatformError(await refused('conn_nope'), 404, 'resource_missing', 'deployments.1.connection');
    const elsewhere = await w.connect({ provider: 'youtube' });
    expectPlatformError(await refused(elsewhere.id), 400, 'invalid_request', 'deployments.1.connection');
    const gone = await w.connect();
    expectStatus(await w.revoke(gone.id), 200);
    expectPlatformError(await refused(gone.id), 409, 'resource_conflict', 'deployments.1.connection');
    const create = await t.http.post(
      `${P}/distributions`,
      { name: 'x', budget: 0, deployments: [{ ...sandbox(), connection: gone.id }] },
      { token: w.token, headers: { 'idempotency-key': randomUUID() } },
    );
    expectPlatformError(create, 409, 'resource_conflict', 'deployments.0.connection');
    // Another tenant's connection is unknown here.
    const stranger = await who();
    const theirs = await stranger.connect();
    expectPlatformError(await refused(theirs.id), 404, 'resource_missing', 'deployments.1.connection');
  });

  test('revoking a connection used by live deployments tears each down as a deployment.teardown operation; the others stay', async () => {
    const w = await who();
    const conn = await w.connect();
    const { distribution } = await launch(t, w, {
      deployments: [{ ...sandbox(), connection: conn.id }, sandbox(), { ...sandbox({ cleanup: 'fail' }), connection: conn.id }],
    });
    await drain(t);
    const before = await deployments(t, w, distribution.id);
    expect(before.map((d) => d.status)).toEqual(['active', 'active', 'active']);
    const revoked = expectStatus(await w.revoke(conn.id), 200);
    expect(revoked.teardowns.map((o: { kind: string; subject: unknown; status: string }) => [o.kind, o.subject, o.status])).toEqual([
      ['deployment.teardown', { type: 'deployment', id: before[0].id }, 'pending'],
      ['deployment.teardown', { type: 'deployment', id: before[2].id }, 'pending'],
    ]);
    await drain(t);
    expect((await deployments(t, w, distribution.id)).map((d) => d.status)).toEqual(['canceled', 'active', 'cleanup_failed']);
    expect(await op(t, w, revoked.teardowns[0].id)).toMatchObject({ status: 'succeeded', result: { deployment_status: 'canceled' } });
    expect(await op(t, w, revoked.teardowns[1].id)).toMatchObject({
      status: 'failed',
      result: { deployment_status: 'cleanup_failed' },
      error: { code: 'cleanup_failed' },
    });
    // Only the placements end: the distribution keeps its status.
    expect((await dist(t, w, distribution.id)).status).toBe('active');
    const evts = (await events(t, w)).filter((e) => e.type.startsWith('deployment.'));
    expect(typesOf(evts, before[0].id)).toEqual([
      'deployment.created',
      'deployment.activated',
      'deployment.cancel_requested',
      'deployment.canceled',
    ]);
    expect(typesOf(evts, before[2].id).slice(-2)).toEqual(['deployment.cancel_requested', 'deployment.cleanup_failed']);
    expect(typesOf(evts, before[1].id)).toEqual(['deployment.created', 'deployment.activated']);
  });

  test('a teardown waits for the provision running on its deployment (awaiting_target_settle), then tears down what it left', async () => {
    const w = await who();
    const conn = await w.connect();
    const { distribution } = await launch(t, w, { deployments: [{ ...sandbox({ outcome: 'review' }), connection: conn.id }] });
    await drain(t);
    const [dep] = await deployments(t, w, distribution.id);
    expect(dep.status).toBe('in_review');
    const [teardown] = expectStatus(await w.revoke(conn.id), 200).teardowns;
    await drain(t);
    expect(await op(t, w, teardown.id)).toMatchObject({ status: 'waiting', waiting_reason: 'awaiting_target_settle' });
    expect((await deployments(t, w, distribution.id))[0].status).toBe('in_review');
    const approved = await t.http.post(
      `/operator/sandbox/deployments/${dep.id}/review`,
      { decision: 'approve' },
      { token: t.operatorToken },
    );
    expect(approved.status, approved.text).toBe(200);
    await drain(t);
    expect(await op(t, w, teardown.id)).toMatchObject({ status: 'succeeded', result: { deployment_status: 'canceled' } });
    expect((await deployments(t, w, distribution.id))[0].status).toBe('canceled');
  });

  test('GraphQL: the same actions, with the teardowns on revoke', async () => {
    const w = await who();
    const gql = async (query: string) => (await t.http.post('/graphql', { query }, { token: w.token })).body;
    const created = (
      await gql(
        `mutation { createConnection(externalUserId: "${randomUUID()}", issuer: "${idp}", provider: "sandbox", accountId: "acc", grants: ["a"]) { id status grants accountId } }`,
      )
    ).data.createConnection;
    expect(created).toMatchObject({ status: 'ACTIVE', grants: ['a'], accountId: 'acc' });
    const listed = (await gql('{ connections(provider: "sandbox") { edges { node { id } } } }')).data.connections.edges;
    expect(listed.map((e: { node: { id: string } }) => e.node.id)).toEqual([created.id]);
    const revoked = (await gql(`mutation { revokeConnection(id: "${created.id}") { connection { status revokedAt } teardowns { id } } }`))
      .data.revokeConnection;
    expect(revoked).toMatchObject({ connection: { status: 'REVOKED' }, teardowns: [] });
    expectGraphQLError(
      await t.http.post(
        '/graphql',
        { query: `mutation { revokeConnection(id: "${created.id}") { connection { id } } }` },
        { token: w.token },
      ),
      'invalid_state_transition',
    );
  });
});
