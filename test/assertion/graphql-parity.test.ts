import { describe, expect } from 'vitest';
import { runDueEvaluations } from '../../src/domain/enrollment/due-evaluation.ts';
import { appTest, type TestApp } from '../support/kit.ts';
import { expectStatus, setup } from './helpers.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const camelKey = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
/** A REST object in GraphQL's spelling (top-level keys; `object` is not a GraphQL field). */
/** REST's lower-case closed-set values are GraphQL enum names in SCREAMING_CASE. */
const ENUMS = new Set(['action', 'status', 'standing', 'operator', 'performance_window']);
const camel = (o: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(o)
      .filter(([k]) => k !== 'object')
      .map(([k, v]) => [camelKey(k), ENUMS.has(k) && typeof v === 'string' ? v.toUpperCase() : v]),
  );

const ASSERTION = 'id entity key action value expiresAt effectiveAt livemode createdAt';
const ENROLLMENT =
  'id program entity status standing graceEndsAt evaluation evaluatedAt tier { id name rateBps metric threshold value } livemode createdAt updatedAt';
const Q = {
  create: `mutation($entity: String, $externalUserId: String, $issuer: String, $key: String!, $value: JSON, $expiresAt: String) {
    createAssertion(entity: $entity, externalUserId: $externalUserId, issuer: $issuer, key: $key, value: $value, expiresAt: $expiresAt) { ${ASSERTION} } }`,
  revoke: `mutation($entity: String, $externalUserId: String, $issuer: String, $key: String!) {
    revokeAssertion(entity: $entity, externalUserId: $externalUserId, issuer: $issuer, key: $key) { entity key revoked assertion { ${ASSERTION} } } }`,
  list: `query($entity: String, $externalUserId: String, $issuer: String, $key: String, $includeExpired: Boolean, $first: Int, $after: String) {
    assertions(entity: $entity, externalUserId: $externalUserId, issuer: $issuer, key: $key, includeExpired: $includeExpired, first: $first, after: $after) {
      edges { cursor node { ${ASSERTION} } } pageInfo { hasNextPage endCursor } } }`,
  one: `query($id: ID!) { assertion(id: $id) { ${ASSERTION} } }`,
  program: `mutation($name: String!, $grace: Int) { createProgram(name: $name, gracePeriodSeconds: $grace) { id brand name gracePeriodSeconds performanceWindow requirements { id } livemode createdAt updatedAt } }`,
  requirement: `mutation($program: ID!, $metric: String!, $operator: RequirementOperator!, $threshold: Float) {
    createProgramRequirement(program: $program, metric: $metric, operator: $operator, threshold: $threshold) { id program metric operator threshold createdAt } }`,
  enroll: `mutation($program: ID!, $externalUserId: String, $issuer: String) { createEnrollment(program: $program, externalUserId: $externalUserId, issuer: $issuer) { ${ENROLLMENT} } }`,
  approve: `mutation($id: ID!) { approveEnrollment(id: $id) { ${ENROLLMENT} } }`,
  activate: `mutation($id: ID!) { activateEnrollment(id: $id) { ${ENROLLMENT} } }`,
  enrollment: `query($id: ID!) { enrollment(id: $id) { ${ENROLLMENT} } }`,
  enrollments: `query($program: ID) { enrollments(program: $program) { edges { node { id standing } } } }`,
  programs: `query { programs { edges { node { id name requirements { metric } } } } }`,
};

function gqlOf(token: string) {
  return async (query: string, variables: Record<string, unknown> = {}) => t.http.graphql(query, variables, { token });
}

const data = (res: any, field: string) => {
  expect(res.body.errors, res.text).toBeUndefined();
  return res.body.data[field];
};

/** The same call through REST and GraphQL fails with the same code and param (GraphQL's argument name where it differs). */
async function sameError(rest: Promise<any>, gql: Promise<any>, code: string, gqlParam?: string) {
  const [r, g] = await Promise.all([rest, gql]);
  expect(r.body?.error?.code, r.text).toBe(code);
  expect(g.body.errors?.[0]?.extensions?.code, g.text).toBe(code);
  expect(g.body.errors[0].extensions.param).toBe(gqlParam ?? r.body.error.param);
}

describe('assertions: REST/GraphQL parity', () => {
  test('createAssertion, revokeAssertion, assertions and assertion answer what REST answers', async () => {
    const { api, token } = await setup(t);
    const gql = gqlOf(token);
    const s = { externalUserId: 'u-gql', issuer: 'https://idp.example' };
    const created = data(await gql(Q.create, { ...s, key: 'verified', value: true }), 'createAssertion');
    const viaRest = expectStatus(await api.event(created.id), 200);
    expect(created).toEqual(camel(viaRest));
    expect(created.value).toBe(1);
    // Unchanged: the same event comes back, nothing appended (REST would answer 200).
    expect(data(await gql(Q.create, { ...s, key: 'verified', value: true }), 'createAssertion')).toEqual(created);
    const restNumber = expectStatus(await api.assert({ entity: created.entity, key: 'score', value: 42 }), 201);
    const list = data(await gql(Q.list, { entity: created.entity, first: 1 }), 'assertions');
    expect(list.edges.map((e: any) => e.node)).toEqual([camel(restNumber)]);
    expect(list.pageInfo).toEqual({ hasNextPage: true, endCursor: restNumber.id });
    const page2 = data(await gql(Q.list, { ...s, after: list.pageInfo.endCursor }), 'assertions');
    expect(page2.edges.map((e: any) => e.node)).toEqual([created]);
    expect(data(await gql(Q.one, { id: restNumber.id }), 'assertion')).toEqual(camel(restNumber));

    const revoked = data(await gql(Q.revoke, { entity: created.entity, key: 'verified' }), 'revokeAssertion');
    expect(revoked).toMatchObject({
      entity: created.entity,
      key: 'verified',
      revoked: true,
      assertion: { action: 'REVOKED', value: null },
    });
    expect(data(await gql(Q.revoke, { entity: created.entity, key: 'verified' }), 'revokeAssertion')).toEqual({
      entity: created.entity,
      key: 'verified',
      revoked: false,
      assertion: null,
    });
    expect((await api.events()).map((e) => e.type)).toEqual(['assertion.created', 'assertion.created', 'assertion.revoked']);
  });

  test('the same bad input gives the same error code and param on both', async () => {
    const { api, token } = await setup(t);
    const gql = gqlOf(token);
    const s = { external_user_id: 'u', issuer: 'i' };
    const g = { externalUserId: 'u', issuer: 'i' };
    await sameError(api.assert({ ...s, key: 'Bad', value: 1 }), gql(Q.create, { ...g, key: 'Bad', value: 1 }), 'invalid_request');
    await sameError(api.assert({ ...s, key: 'k', value: 'x' }), gql(Q.create, { ...g, key: 'k', value: 'x' }), 'invalid_request');
    await sameError(
      api.assert({ ...s, key: 'k', value: 1, expires_at: '2000-01-01T00:00:00Z' }),
      gql(Q.create, { ...g, key: 'k', value: 1, expiresAt: '2000-01-01T00:00:00Z' }),
      'invalid_request',
    );
    await sameError(api.assert({ issuer: 'i', key: 'k' }), gql(Q.create, { issuer: 'i', key: 'k' }), 'invalid_request');
    await sameError(
      api.assert({ entity: 'ent_00000000000000000000000000000000', key: 'k' }),
      gql(Q.create, { entity: 'ent_00000000000000000000000000000000', key: 'k' }),
      'resource_missing',
    );
    await sameError(
      api.event('asrt_00000000000000000000000000000000'),
      gql(Q.one, { id: 'asrt_00000000000000000000000000000000' }),
      'resource_missing',
    );
    await sameError(api.list({ ...s, limit: 0 }), gql(Q.list, { ...g, first: 0 }), 'invalid_request', 'first');
    expect(await api.events()).toEqual([]);
  });

  test('scopes: a token without assertions:write gets missing_scope on both', async () => {
    const { api, token } = await setup(t, ['assertions:read', 'events:read']);
    await sameError(
      api.assert({ external_user_id: 'u', issuer: 'i', key: 'k' }),
      gqlOf(token)(Q.create, { externalUserId: 'u', issuer: 'i', key: 'k' }),
      'missing_scope',
    );
  });
});

describe('programs and enrollments: REST/GraphQL parity', () => {
  test('program, requirement, enrollment lifecycle and standing read the same on both', async () => {
    const { api, token } = await setup(t);
    const gql = gqlOf(token);
    const program = data(await gql(Q.program, { name: 'G', grace: 60 }), 'createProgram');
    const req = data(
      await gql(Q.requirement, { program: program.id, metric: 'assert:verified', operator: 'EXISTS' }),
      'createProgramRequirement',
    );
    const restProgram = expectStatus(await api.program(program.id), 200);
    expect({ ...program, requirements: [{ id: req.id }] }).toEqual({ ...camel(restProgram), requirements: [{ id: req.id }] });
    expect(req).toEqual(camel(restProgram.requirements[0]));
    expect(data(await gql(Q.programs), 'programs').edges.map((e: any) => e.node)).toEqual([
      { id: program.id, name: 'G', requirements: [{ metric: 'assert:verified' }] },
    ]);

    const e = data(await gql(Q.enroll, { program: program.id, externalUserId: 'u-1', issuer: 'idp' }), 'createEnrollment');
    expect(e).toMatchObject({ status: 'PENDING', standing: 'NOT_QUALIFIED', evaluation: null });
    data(await gql(Q.approve, { id: e.id }), 'approveEnrollment');
    const active = data(await gql(Q.activate, { id: e.id }), 'activateEnrollment');
    expect(active).toMatchObject({ status: 'ACTIVE', standing: 'NOT_QUALIFIED', evaluation: { trigger: 'activation', qualified: false } });
    expectStatus(await api.assert({ entity: e.entity, key: 'verified', value: true }), 201);
    const viaGql = data(await gql(Q.enrollment, { id: e.id }), 'enrollment');
    expect(viaGql).toEqual(camel(expectStatus(await api.enrollment(e.id), 200)));
    expect(viaGql.standing).toBe('QUALIFIED');
    expect(data(await gql(Q.enrollments, { program: program.id }), 'enrollments').edges).toEqual([
      { node: { id: e.id, standing: 'QUALIFIED' } },
    ]);

    await sameError(api.move(e.id, 'approve'), gql(Q.approve, { id: e.id }), 'invalid_state_transition');
    await sameError(
      api.enrollment('enr_00000000000000000000000000000000'),
      gql(Q.enrollment, { id: 'enr_00000000000000000000000000000000' }),
      'resource_missing',
    );
    await sameError(
      api.addRequirement(program.id, { metric: 'assert:k', operator: 'gte' }),
      gql(Q.requirement, { program: program.id, metric: 'assert:k', operator: 'GTE' }),
      'invalid_request',
    );
    await runDueEvaluations(t.app.deps);
    const types = (await api.events()).map((x) => x.type);
    expect(types).toEqual([
      'enrollment.created',
      'enrollment.approved',
      'enrollment.activated',
      'assertion.created',
      'enrollment.qualified',
    ]);
  });
});
