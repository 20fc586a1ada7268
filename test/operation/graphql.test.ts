import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { appTest, type TestApp } from '../support/kit.ts';
import { waitUntil, wsClient } from '../support/stream-client.ts';
import { drain, launch, op, operationsConfig, sandbox, tenant, topUp, verb } from './helpers.ts';

const test = appTest({ config: operationsConfig() });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const OP = 'id kind status waitingReason attempts maxAttempts error result progress targetOperationId subject { type id } completedAt';
const gql = (token: string, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  t.http.graphql(query, variables, { token, headers });

/** REST snake_case → GraphQL camelCase (closed sets as enum names), for the fields both expose. */
const asGraphQL = (o: any) => ({
  id: o.id,
  kind: o.kind,
  status: o.status.toUpperCase(),
  waitingReason: o.waiting_reason?.toUpperCase() ?? null,
  attempts: o.attempts,
  maxAttempts: o.max_attempts,
  error: o.error,
  result: o.result,
  progress: o.progress,
  targetOperationId: o.target_operation_id,
  subject: o.subject,
  completedAt: o.completed_at,
});

describe('GraphQL parity', () => {
  test('createDistribution returns the launch operation; operation(id) and operations match REST', async () => {
    const who = await tenant(t);
    await topUp(t, who.brand, 100);
    const res = await gql(
      who.token,
      `mutation($d: [DeploymentInput!]!) { createDistribution(name: "G", budget: 100, deployments: $d) { operation { ${OP} } distribution { id status budget } } }`,
      { d: [{ provider: 'sandbox', config: { outcome: 'fail' } }, { provider: 'sandbox' }] },
      { 'idempotency-key': randomUUID() },
    );
    expect(res.body.errors).toBeUndefined();
    const created = res.body.data.createDistribution;
    expect(created.operation).toMatchObject({ kind: 'distribution.launch', status: 'PENDING', waitingReason: null });
    expect(created.distribution).toMatchObject({ status: 'LAUNCHING', budget: 100 });
    await drain(t);
    const rest = await op(t, who, created.operation.id);
    const one = await gql(who.token, `query($id: ID!) { operation(id: $id) { ${OP} } }`, { id: created.operation.id });
    expect(one.body.data.operation).toEqual(asGraphQL(rest));
    const list = await gql(who.token, `{ operations(subjectType: "distribution", first: 5) { edges { node { ${OP} } } } }`);
    const restList = await t.http.get('/v1/platform/operations?subject_type=distribution&limit=5', { token: who.token });
    expect(list.body.data.operations.edges.map((e: any) => e.node)).toEqual(restList.body.data.map(asGraphQL));
  });

  test('parent_operation_id and target_operation_id: a launch`s children and the cancel targeting an operation, the same on REST and GraphQL', async () => {
    const who = await tenant(t);
    const list = (query: string, token = who.token) => t.http.get(`/v1/platform/operations?${query}`, { token });
    const byFilter = `query($p: String, $t: String) { operations(parentOperationId: $p, targetOperationId: $t) { edges { node { ${OP} } } } }`;
    await topUp(t, who.brand, 100);
    const { operation: launched } = await launch(t, who, { budget: 100, deployments: [sandbox(), sandbox()] });
    await drain(t);
    const children = await list(`parent_operation_id=${launched.id}`);
    expect(children.status, children.text).toBe(200);
    expect(children.body.data.map((o: any) => [o.kind, o.parent_operation_id])).toEqual([
      ['deployment.provision', launched.id],
      ['deployment.provision', launched.id],
    ]);
    const g = await gql(who.token, byFilter, { p: launched.id });
    expect(g.body.data.operations.edges.map((e: any) => e.node)).toEqual(children.body.data.map(asGraphQL));

    // The wallet is spent: this launch waits for funds, and its cancel targets it.
    const { operation: waiting, distribution } = await launch(t, who, { budget: 10_000, deployments: [sandbox()] });
    await drain(t);
    const cancel = await verb(t, who, distribution.id, 'cancel');
    const targeting = await list(`target_operation_id=${waiting.id}`);
    expect(targeting.body.data.map((o: any) => [o.kind, o.id])).toEqual([['distribution.cancel', cancel.body.operation.id]]);
    const gt = await gql(who.token, byFilter, { t: waiting.id });
    expect(gt.body.data.operations.edges.map((e: any) => e.node)).toEqual(targeting.body.data.map(asGraphQL));
    expect((await list(`target_operation_id=${launched.id}`)).body.data).toEqual([]);

    // Another organization's operation matches nothing; an empty filter is refused naming it.
    const other = await tenant(t);
    expect((await list(`parent_operation_id=${launched.id}`, other.token)).body.data).toEqual([]);
    const bad = await list('parent_operation_id=');
    expect([bad.status, bad.body.error.code, bad.body.error.param]).toEqual([400, 'invalid_request', 'parent_operation_id']);
    const gBad = await gql(who.token, byFilter, { t: '' });
    expect(gBad.body.errors[0].extensions).toMatchObject({ code: 'invalid_request', param: 'targetOperationId' });
  });

  test('same error codes: invalid_status, resource_missing, operation_conflict, missing_scope, invalid_request', async () => {
    const who = await tenant(t);
    const rest = await t.http.get('/v1/platform/operations?status=done', { token: who.token });
    // GraphQL's status is the OperationStatus enum: an unknown value is refused by validation, before the domain.
    const g = await gql(who.token, `{ operations(status: DONE) { edges { node { id } } } }`);
    expect([rest.body.error.code, g.body.errors[0].extensions.code]).toEqual(['invalid_status', 'invalid_request']);
    expect(g.body.errors[0].message).toContain('OperationStatus');

    const missing = `op_${'0'.repeat(32)}`;
    expect((await t.http.get(`/v1/platform/operations/${missing}`, { token: who.token })).body.error.code).toBe('resource_missing');
    expect((await gql(who.token, `{ operation(id: "${missing}") { id } }`)).body.errors[0].extensions.code).toBe('resource_missing');

    const { distribution } = await launch(t, who, { deployments: [sandbox()] });
    expect((await verb(t, who, distribution.id, 'pause')).body.error.code).toBe('operation_conflict');
    const pause = await gql(who.token, `mutation($id: ID!) { pauseDistribution(id: $id) { operation { id } } }`, { id: distribution.id });
    expect(pause.body.errors[0].extensions.code).toBe('operation_conflict');

    const reader = await tenant(t, ['distributions:read', 'distributions:write']);
    const body = { name: 'x', budget: 0, deployments: [sandbox()] };
    expect((await t.http.post('/v1/platform/distributions', body, { token: reader.token })).body.error).toMatchObject({
      code: 'missing_scope',
      message: 'missing_scope:distributions:launch',
    });
    const denied = await gql(
      reader.token,
      `mutation { createDistribution(name: "x", budget: 0, deployments: [{provider: "sandbox"}]) { operation { id } } }`,
    );
    expect(denied.body.errors[0].extensions.code).toBe('missing_scope');

    const bad = await gql(
      who.token,
      `mutation { validateDistribution(name: "x", budget: 0, deployments: [{provider: "nope"}]) { valid } }`,
    );
    const badRest = await t.http.post(
      '/v1/platform/distributions/validate',
      { ...body, deployments: [{ provider: 'nope' }] },
      { token: who.token },
    );
    expect([badRest.status, badRest.body.error.code, bad.body.errors[0].extensions.code]).toEqual([
      400,
      'invalid_request',
      'invalid_request',
    ]);
  });

  test('Subscription.operation pushes every status change until terminal, then completes', async () => {
    const who = await tenant(t);
    const { operation, distribution } = await launch(t, who, { budget: 10, deployments: [sandbox()] });
    const client = wsClient(t, `Bearer ${who.token}`);
    const seen: any[] = [];
    let completed = false;
    const errors: unknown[] = [];
    client.subscribe(
      { query: `subscription($id: ID!) { operation(id: $id) { status waitingReason } }`, variables: { id: operation.id } },
      { next: (m: any) => seen.push(m.data?.operation ?? m), error: (e) => errors.push(e), complete: () => (completed = true) },
    );
    try {
      await waitUntil(() => seen.length >= 1, 'the initial state');
      await drain(t); // → waiting funding_required
      await waitUntil(
        () => seen.some((s) => s.waitingReason === 'FUNDING_REQUIRED'),
        () => JSON.stringify(seen),
      );
      await topUp(t, who.brand, 10);
      await drain(t);
      await waitUntil(
        () => completed,
        () => `completion; saw ${JSON.stringify(seen)} ${JSON.stringify(errors)}`,
        8000,
      );
      const statuses = seen.map((s) => s.status);
      expect(statuses[0]).toBe('PENDING');
      expect(statuses).toContain('WAITING');
      expect(statuses.at(-1)).toBe('SUCCEEDED');
      expect((await op(t, who, operation.id)).status).toBe('succeeded');
      void distribution;
    } finally {
      await client.dispose();
    }
  });
});
