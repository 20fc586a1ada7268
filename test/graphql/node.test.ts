import { beforeAll, describe, expect } from 'vitest';
import { ASSERTION_ACTIONS } from '../../src/domain/assertion/presenter.ts';
import { DEPLOYMENT_STATUSES, DISTRIBUTION_STATUSES } from '../../src/domain/distribution/states.ts';
import { ENROLLMENT_STATUSES, STANDINGS } from '../../src/domain/enrollment/presenter.ts';
import { OPERATION_STATUSES, WAITING_REASONS } from '../../src/domain/operation/operation.ts';
import { RELATIONSHIP_STATUSES } from '../../src/domain/relationship/states.ts';
import { CONNECTION_STATUSES } from '../../src/domain/connection/connection.ts';
import { REQUIREMENT_OPERATORS } from '../../src/domain/program/program.ts';
import { UNIT_STATUSES } from '../../src/domain/unit/unit.ts';
import { DELIVERY_STATUSES } from '../../src/domain/webhook/delivery.ts';
import { WEBHOOK_ENDPOINT_STATUSES } from '../../src/domain/webhook/endpoint.ts';
import { appTest, buildOrg, buildToken, type TestApp, type TestOrg } from '../support/kit.ts';
import { createEndpoint, settle, webhookConfig } from '../webhook/receiver.ts';

/**
 * The self-documenting schema: closed sets as SCREAMING_CASE enums declared
 * from the domain's arrays (outputs, filters, REST unchanged), and node(id:)
 * over every prefixed id with the organization, brand and scope rules of the
 * type's own field. Runs on PGlite and PostgreSQL like every suite.
 */
const test = appTest({ config: webhookConfig({ retryScheduleMs: [0] }) });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

/** Each Node type, the scope its own field needs (null: none). */
const NODE_TYPES = {
  Organization: null,
  Brand: null,
  Unit: 'units:read',
  Event: 'events:read',
  WebhookEndpoint: 'webhooks:read',
  WebhookDelivery: 'webhooks:read',
  Assertion: 'assertions:read',
  Program: 'programs:read',
  ProgramRequirement: 'program_requirements:read',
  Enrollment: 'enrollments:read',
  Operation: 'operations:read',
  Distribution: 'distributions:read',
  Deployment: 'deployments:read',
  Entity: 'entities:read',
  Relationship: 'relationships:read',
  ConnectedAccount: 'connections:read',
  HandoffIssuer: 'handoff:read',
} as const;
type NodeType = keyof typeof NODE_TYPES;
const SCOPES = [
  ...new Set(Object.values(NODE_TYPES).filter((s) => s !== null && s !== 'operations:read')),
  'units:create',
  'webhooks:write',
  'assertions:write',
  'program_requirements:write',
  'enrollments:write',
  'distributions:write',
  'distributions:launch',
  'relationships:write',
  'connections:write',
  'handoff:write',
];

const gql = async (token: string, query: string, variables: Record<string, unknown> = {}) => {
  const res = await t.http.graphql(query, variables, { token });
  return res.body as { data?: any; errors?: { message: string; extensions: { code: string; param?: string } }[] };
};
const ok = async (token: string, query: string, variables: Record<string, unknown> = {}) => {
  const body = await gql(token, query, variables);
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data;
};
const NODE = `query($id: ID!) { node(id: $id) { __typename id } }`;

/** One object of every Node type in a fresh organization, made through GraphQL; the ids by type. */
async function world(): Promise<{ org: TestOrg; token: string; ids: Record<NodeType, string> }> {
  const org = await buildOrg(t);
  const token = (await buildToken(t, org, SCOPES)).secret;
  const viewer = (await ok(token, `{ viewer { organization { id } brand { id } } }`)).viewer;
  const unit = (await ok(token, `mutation { createUnit(type: "video", caption: "n") { unit { id } } }`)).createUnit.unit;
  // Nothing listens on the discard port: the delivery exists all the same (failing, then exhausted).
  const endpoint = await createEndpoint(t, token, { url: 'http://127.0.0.1:9/node' });
  const assertion = (await ok(token, `mutation { createAssertion(externalUserId: "u1", issuer: "iss", key: "verified") { id } }`))
    .createAssertion;
  const program = (await ok(token, `mutation { createProgram(name: "P") { id } }`)).createProgram;
  const requirement = (
    await ok(token, `mutation($p: ID!) { createProgramRequirement(program: $p, metric: "assert:verified", operator: EXISTS) { id } }`, {
      p: program.id,
    })
  ).createProgramRequirement;
  const enrollment = (
    await ok(token, `mutation($p: ID!) { createEnrollment(program: $p, externalUserId: "u1", issuer: "iss") { id } }`, { p: program.id })
  ).createEnrollment;
  const relationship = (await ok(token, `mutation { createRelationship(externalUserId: "u1", issuer: "iss") { id entity } }`))
    .createRelationship;
  const connection = (
    await ok(token, `mutation { createConnection(externalUserId: "u1", issuer: "iss", provider: "sandbox", accountId: "a1") { id } }`)
  ).createConnection;
  const issuer = (await ok(token, 'mutation { createHandoffIssuer(name: "i", algorithm: "HS256") { id } }')).createHandoffIssuer;
  const launched = (
    await ok(
      token,
      `mutation { createDistribution(name: "D", budget: 100, deployments: [{ provider: "sandbox" }]) { operation { id } distribution { id } } }`,
    )
  ).createDistribution;
  const deployment = (
    await ok(token, `query($d: String) { deployments(distribution: $d) { edges { node { id } } } }`, { d: launched.distribution.id })
  ).deployments.edges[0].node;
  await settle(t);
  const delivery = (
    await ok(token, `query($id: ID!) { webhookEndpoint(id: $id) { deliveries(first: 1) { edges { node { id } } } } }`, { id: endpoint.id })
  ).webhookEndpoint.deliveries.edges[0].node;
  const event = (await ok(token, `{ events(first: 1) { edges { node { id } } } }`)).events.edges[0].node;
  return {
    org,
    token,
    ids: {
      Organization: viewer.organization.id,
      Brand: viewer.brand.id,
      Unit: unit.id,
      Event: event.id,
      WebhookEndpoint: endpoint.id,
      WebhookDelivery: delivery.id,
      Assertion: assertion.id,
      Program: program.id,
      ProgramRequirement: requirement.id,
      Enrollment: enrollment.id,
      Operation: launched.operation.id,
      Distribution: launched.distribution.id,
      Deployment: deployment.id,
      Entity: relationship.entity,
      Relationship: relationship.id,
      ConnectedAccount: connection.id,
      HandoffIssuer: issuer.id,
    },
  };
}

describe('closed sets are GraphQL enums declared from the domain arrays', () => {
  test('each enum holds exactly its domain set, upper-cased', async () => {
    const sets: Record<string, readonly string[]> = {
      OperationStatus: OPERATION_STATUSES,
      OperationWaitingReason: WAITING_REASONS,
      DistributionStatus: DISTRIBUTION_STATUSES,
      DeploymentStatus: DEPLOYMENT_STATUSES,
      AssertionAction: ASSERTION_ACTIONS,
      UnitStatus: UNIT_STATUSES,
      WebhookEndpointStatus: WEBHOOK_ENDPOINT_STATUSES,
      WebhookDeliveryStatus: DELIVERY_STATUSES,
      EnrollmentStatus: ENROLLMENT_STATUSES,
      EnrollmentStanding: STANDINGS,
      RequirementOperator: REQUIREMENT_OPERATORS,
      RelationshipStatus: RELATIONSHIP_STATUSES,
      ConnectionStatus: CONNECTION_STATUSES,
    };
    const { token } = { token: (await buildToken(t, await buildOrg(t), ['units:read'])).secret };
    for (const [name, values] of Object.entries(sets)) {
      const type = (await ok(token, `query($n: String!) { __type(name: $n) { kind enumValues { name description } } }`, { n: name }))
        .__type;
      expect(type.kind, name).toBe('ENUM');
      expect(type.enumValues.map((v: { name: string }) => v.name).sort(), name).toEqual(values.map((v) => v.toUpperCase()).sort());
    }
  });

  test('outputs and filters speak the enum; REST keeps its lower-case values', async () => {
    const { token, ids } = await world();
    // The launch finds an empty wallet and waits for funding.
    await t.app.operations.drain();
    const op = (await ok(token, `query($id: ID!) { operation(id: $id) { status waitingReason } }`, { id: ids.Operation })).operation;
    expect(op).toEqual({ status: 'WAITING', waitingReason: 'FUNDING_REQUIRED' });
    const rest = (await t.http.get(`/v1/platform/operations/${ids.Operation}`, { token })).body.operation;
    expect([rest.status, rest.waiting_reason]).toEqual(['waiting', 'funding_required']);

    const d = await ok(token, `query($id: ID!) { distribution(id: $id) { status } deployment(id: "${ids.Deployment}") { status } }`, {
      id: ids.Distribution,
    });
    expect(d.distribution.status).toBe('LAUNCHING');
    expect(DEPLOYMENT_STATUSES.map((s) => s.toUpperCase())).toContain(d.deployment.status);
    const restDist = (await t.http.get(`/v1/platform/distributions/${ids.Distribution}`, { token })).body.distribution;
    expect(restDist.status).toBe('launching');

    // Filters take the enum, as a literal or a variable.
    const ops = async (status: string) =>
      (
        await ok(token, `query($s: OperationStatus) { operations(status: $s) { edges { node { id } } } }`, { s: status })
      ).operations.edges.map((e: any) => e.node.id);
    expect(await ops('WAITING')).toContain(ids.Operation);
    expect(await ops('SUCCEEDED')).not.toContain(ids.Operation);
    const dists = (await ok(token, `{ distributions(status: LAUNCHING) { edges { node { id status } } } }`)).distributions.edges.map(
      (e: any) => e.node,
    );
    expect(dists).toEqual([{ id: ids.Distribution, status: 'LAUNCHING' }]);
    expect((await ok(token, `{ distributions(status: ACTIVE) { edges { node { id } } } }`)).distributions.edges).toEqual([]);
    const enr = await ok(token, `{ enrollments(status: PENDING) { edges { node { id status standing } } } }`);
    expect(enr.enrollments.edges).toEqual([{ node: { id: ids.Enrollment, status: 'PENDING', standing: 'NOT_QUALIFIED' } }]);

    // The old lower-case spelling is refused with a 4xx-style request error naming the argument.
    const old = await gql(token, `query($s: OperationStatus) { operations(status: $s) { edges { node { id } } } }`, { s: 'waiting' });
    expect(old.data).toBeUndefined();
    expect(old.errors![0]!.extensions).toMatchObject({ code: 'invalid_request', param: 's' });
    expect(old.errors![0]!.message).toContain('WAITING');
  });
});

describe('node(id:)', () => {
  let a: Awaited<ReturnType<typeof world>>;
  beforeAll(async () => {
    a = await world();
  });

  test('answers every type by its prefixed id, as the type', async () => {
    for (const [type, id] of Object.entries(a.ids)) {
      expect((await ok(a.token, NODE, { id })).node, type).toEqual({ __typename: type, id });
    }
    const op = (await ok(a.token, `query($id: ID!) { node(id: $id) { id ... on Operation { kind status } } }`, { id: a.ids.Operation }))
      .node;
    expect(op).toMatchObject({ id: a.ids.Operation, kind: 'distribution.launch' });
    expect(OPERATION_STATUSES.map((s) => s.toUpperCase())).toContain(op.status);
  });

  test("another organization's ids answer null, like unknown ids, with no error", async () => {
    const other = await buildOrg(t);
    const token = (await buildToken(t, other, SCOPES)).secret;
    for (const [type, id] of Object.entries(a.ids)) {
      const res = await gql(token, NODE, { id });
      expect(res, type).toEqual({ data: { node: null } });
    }
  });

  test('without the scope the type needs, null (operations:read is implicit; organization and brand need none)', async () => {
    const token = (await buildToken(t, a.org, ['units:read'])).secret;
    for (const [type, id] of Object.entries(a.ids) as [NodeType, string][]) {
      const scope = NODE_TYPES[type];
      const readable = scope === null || scope === 'units:read' || scope === 'operations:read';
      expect((await gql(token, NODE, { id })).data?.node, type).toEqual(readable ? { __typename: type, id } : null);
    }
  });

  test("another brand's program and requirement are null, as program(id:) answers resource_missing", async () => {
    const second = a.org.brands[1]!.id;
    const res = await t.http.graphql(NODE, { id: a.ids.Program }, { token: a.token, headers: { 'Service-Brand': second } });
    expect(res.body).toEqual({ data: { node: null } });
    const req = await t.http.graphql(NODE, { id: a.ids.ProgramRequirement }, { token: a.token, headers: { 'Service-Brand': second } });
    expect(req.body).toEqual({ data: { node: null } });
    const own = await t.http.graphql(
      `query($id: ID!) { program(id: $id) { id } }`,
      { id: a.ids.Program },
      { token: a.token, headers: { 'Service-Brand': second } },
    );
    expect(own.body.errors[0].extensions.code).toBe('resource_missing');
  });

  test('malformed, unknown and unprefixed ids answer null', async () => {
    const malformed = Object.values(a.ids).flatMap((id) => [
      `${id.slice(0, id.indexOf('_'))}_xyz`,
      `${id}0`,
      id.replace(/[0-9a-f]{32}$/, '0'.repeat(32)),
    ]);
    for (const id of [
      ...malformed,
      '',
      'nope',
      'op_',
      'op_xyz',
      `op_${'0'.repeat(32)}`,
      `zz_${'0'.repeat(32)}`,
      `dist_${'f'.repeat(32)}`,
      a.ids.Operation.toUpperCase(),
      `_${a.ids.Unit}`,
    ]) {
      expect(await gql(a.token, NODE, { id }), id).toEqual({ data: { node: null } });
    }
  });
});
