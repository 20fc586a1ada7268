import { describe, expect } from 'vitest';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { Action } from '../../src/domain/action/action.ts';
import { ACTIONS, ACTION_SCOPES } from '../../src/domain/registry.ts';
import { restActionRoutes } from '../../rest/platform/bindings.ts';
import { assertions } from '../../src/domain/assertion/assertion.ts';
import { deployments, distributions } from '../../src/domain/distribution/distribution.ts';
import { enrollments } from '../../src/domain/enrollment/enrollment.ts';
import { operations, watchOperation } from '../../src/domain/operation/operation.ts';
import { IMPLICIT_SCOPES } from '../../src/domain/scope/catalogue.ts';
import { events } from '../../src/domain/event/event.ts';
import { eventTypes } from '../../src/domain/event/catalogue.ts';
import { programs } from '../../src/domain/program/program.ts';
import { webhookDeliveries } from '../../src/domain/webhook/delivery.ts';
import { webhookEndpoints } from '../../src/domain/webhook/endpoint.ts';
import { performance } from '../../src/domain/performance/performance.ts';
import { tiers } from '../../src/domain/program/tiers.ts';
import { webhookReplays } from '../../src/domain/webhook/replay.ts';
import { eventDestinations } from '../../src/domain/destination/destination.ts';
import { brands } from '../../src/domain/brand/brand.ts';
import { entities } from '../../src/domain/entity/entities.ts';
import { relationships } from '../../src/domain/relationship/relationship.ts';
import { ledger } from '../../src/domain/payout/ledger.ts';
import { payouts } from '../../src/domain/payout/payout.ts';
import { connections } from '../../src/domain/connection/connection.ts';
import { connectConfig } from '../../src/domain/connect/config.ts';
import { handoffIssuers } from '../../src/domain/connect/handoff-issuer.ts';
import { boundFields } from '../../src/graphql/bound-fields.ts';
import { schema } from '../../src/graphql/schema/index.ts';
import { newId } from '../../src/domain/id.ts';
import { appTest, buildTenant, emitEvent, type TestApp } from '../support/kit.ts';
import { operationById } from '../../src/domain/operation/store.ts';
import { brandRow, enrollmentRow, insertLedgerEntry, insertPayoutRow, programRow } from '../support/db-access.ts';

/**
 * Every action declared for both fronts (src/domain/action/action.ts) has a
 * REST route and a GraphQL field bound to it, and both answer alike: the same
 * missing_scope, the same code and parameter for bad input and unknown ids,
 * the same value (REST's snake_case keys are GraphQL's camelCase fields).
 */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

/** Every action, and every scope one needs: from the registry. */
const ALL = ACTIONS;
const SCOPES = [...ACTION_SCOPES];
const P = '/v1/platform';

const EP = `id url description enabledEvents filter { brands subjectTypes } status disabledReason failingSince
  policy { timeoutMs retrySchedule maxInFlight rateLimitPerSecond } ordering secret rotatedAt livemode createdAt updatedAt`;
const WINDOW = 'attempts succeeded successRate p50Ms p99Ms';
const HEALTH = `lastHour { ${WINDOW} } lastDay { ${WINDOW} } lastSuccessAt lastFailure { at statusCode error }`;
const ED = `${EP} type exchange routingKey subject stream maxLen caCertificate`;
const REQ = 'id program metric operator threshold createdAt';
const MSR = 'id entity metric value occurredAt program externalId duplicate createdAt';
const PROG = `id brand name gracePeriodSeconds performanceWindow requirements { ${REQ} } livemode createdAt updatedAt`;

type Ids = Record<string, string>;
interface Call {
  rest: { method: 'GET' | 'POST' | 'DELETE'; path: string; body?: Record<string, unknown>; envelope?: string };
  gql: { query: string; vars?: Record<string, unknown>; pick?: (data: any) => unknown };
}
interface Row {
  action: Action;
  /** Creates what the call addresses, once per front. */
  setup?: (token: string) => Promise<Ids>;
  call: (ids: Ids) => Call;
  /** A call with bad input, and the parameter GraphQL names (REST's otherwise). */
  bad?: (ids: Ids) => Call & { gqlParam?: string };
  /** A call addressing an unknown id. */
  unknown?: Call & { gqlParam?: string };
  /** The call is refused alike on both fronts with this code (its success is proven elsewhere). */
  refused?: string;
  /** Fields besides VOLATILE that differ between the two fronts' objects (e.g. each front's own entity). */
  volatile?: string[];
}

const rest = (token: string, c: Call['rest']) => t.http.request(c.method, P + c.path, c.body, { token });
const gql = (token: string, c: Call['gql']) => t.http.graphql(c.query, c.vars ?? {}, { token });

const createEndpoint = async (token: string): Promise<Ids> => {
  const res = await t.http.post(`${P}/webhook_endpoints`, { url: 'https://a.example/hook', description: 'd' }, { token });
  return { endpoint: res.body.webhook_endpoint.id };
};
const DESTINATION = { type: 'redis', url: 'rediss://redis.example', stream: 's', description: 'd' };
const createDestination = async (token: string): Promise<Ids> => {
  const res = await t.http.post(`${P}/event_destinations`, DESTINATION, { token });
  return { destination: res.body.event_destination.id };
};
const createProgram = async (token: string): Promise<Ids> => {
  const res = await t.http.post(`${P}/programs`, { name: 'P', grace_period_seconds: 60 }, { token });
  const req = await t.http.post(`${P}/programs/${res.body.id}/requirements`, { metric: 'assert:verified', operator: 'exists' }, { token });
  return { program: res.body.id, requirement: req.body.id };
};
/** One sequenced test event per organization (both fronts read the same one: its seq is the organization's next). */
const emitted = new Map<string, Promise<Ids>>();
const createEvent = (token: string): Promise<Ids> => {
  if (!emitted.has(token))
    emitted.set(
      token,
      (async () => {
        const me = await t.http.post('/api/smoke', {}, { token });
        return { event: await emitEvent(t, me.body.org_id, 'assertion.created', { note: 'parity' }) };
      })(),
    );
  return emitted.get(token)!;
};
const edges = (conn: any) => ({ data: conn.edges.map((e: any) => e.node), hasMore: conn.pageInfo.hasNextPage });

const ENR =
  'id program entity status standing graceEndsAt evaluation evaluatedAt tier { id name rateBps metric threshold value } livemode createdAt updatedAt';
const OP = `id subject { type id } kind status waitingReason attempts maxAttempts error result progress targetOperationId
  parentOperationId livemode createdAt updatedAt completedAt`;
const SUBJECT = { external_user_id: 'u-parity', issuer: 'https://idp.example' };
const GQL_SUBJECT = `externalUserId: "${SUBJECT.external_user_id}", issuer: "${SUBJECT.issuer}"`;
/** GraphQL's JSON fields (evaluation, result, progress) keep REST's keys: compare the value as REST's is compared. */
const json = (field: string) => (d: any) => camel(d[field]);
/** A program without requirements (its enrollments' evaluations name none, so both fronts' read alike). */
const createBareProgram = async (token: string): Promise<Ids> => {
  const res = await t.http.post(`${P}/programs`, { name: 'P', grace_period_seconds: 60 }, { token });
  return { program: res.body.id };
};
const createEnrollment = async (token: string, moves: string[] = []): Promise<Ids> => {
  const { program } = await createBareProgram(token);
  const res = await t.http.post(`${P}/enrollments`, { program, ...SUBJECT }, { token });
  for (const m of moves) expect((await t.http.post(`${P}/enrollments/${res.body.id}/${m}`, undefined, { token })).status).toBe(200);
  return { program: program!, enrollment: res.body.id };
};
/** Waits until the operation is terminal. */
const settled = async (id: string) => {
  const row = await operationById(t.app.deps.db.prisma, id);
  for await (const _ of await watchOperation(t.app.deps, row.organizationId, id));
};
/**
 * A launched distribution, once its launch operation is terminal (so both fronts read it alike): `active`, or
 * `failed` with the sandbox's `outcome: 'fail'`.
 */
const launched = async (token: string, config: Record<string, unknown> = {}): Promise<Ids> => {
  const body = { name: 'D', budget: 0, deployments: [{ provider: 'sandbox', config }] };
  const res = await t.http.post(`${P}/distributions`, body, { token, headers: { 'idempotency-key': randomUUID() } });
  expect(res.status, res.text).toBe(202);
  const operation = res.body.operation.id;
  await settled(operation);
  const deps = await t.http.get(`${P}/deployments?distribution=${res.body.distribution.id}`, { token });
  return { operation, distribution: res.body.distribution.id, deployment: deps.body.data[0].id };
};

const ASRT = 'id entity key action value expiresAt effectiveAt livemode createdAt';
const DIST = 'id brand name status budget budgetReserved budgetSpent livemode createdAt updatedAt';
const DEP = 'id distribution provider config connection status livemode createdAt updatedAt';
/** A claim about a fresh external user (its own entity, so the two fronts never share a claim). */
const createAssertion = async (token: string): Promise<Ids> => {
  const user = randomUUID();
  const res = await t.http.post(`${P}/assertions`, { external_user_id: user, issuer: 'acme', key: 'verified' }, { token });
  return { user, assertion: res.body.id };
};
const paused = async (token: string): Promise<Ids> => {
  const ids = await launched(token);
  const res = await t.http.post(`${P}/distributions/${ids.distribution}/pause`, undefined, { token });
  expect(res.status, res.text).toBe(202);
  await settled(res.body.operation.id);
  return ids;
};
/** A verb on a distribution: REST answers `{ operation, distribution }`, compared by its distribution. */
const distributionVerb =
  (name: string, field: string) =>
  (ids: Ids): Call => ({
    rest: { method: 'POST', path: `/distributions/${ids.distribution}/${name}`, envelope: 'distribution' },
    gql: { query: `mutation { ${field}(id: "${ids.distribution}") { distribution { ${DIST} } } }`, pick: (d) => d[field].distribution },
  });
const unknownDistribution = (name: string, field: string) => ({
  rest: { method: 'POST' as const, path: `/distributions/dist_nope/${name}` },
  gql: { query: `mutation { ${field}(id: "dist_nope") { distribution { id } } }` },
});

const BRAND = 'id organization slug name default createdAt';
const RELATIONSHIP = 'id brand entity status endedAt livemode createdAt updatedAt';
const ENTITY =
  'id identities { externalUserId issuer } claims enrollments { id program status standing } relationships { id brand status } createdAt';
/** A relationship of a fresh external user (its own entity), moved as given. */
const createRelationship = async (token: string, moves: string[] = []): Promise<Ids> => {
  const user = randomUUID();
  const res = await t.http.post(`${P}/relationships`, { external_user_id: user, issuer: 'acme' }, { token });
  expect(res.status, res.text).toBe(201);
  for (const m of moves) expect((await t.http.post(`${P}/relationships/${res.body.id}/${m}`, undefined, { token })).status).toBe(200);
  return { user, relationship: res.body.id, entity: res.body.entity };
};
const CFG = 'brand allowedOrigins defaultProgram requiredAssertions displayName primaryColor accentColor livemode updatedAt';
const ISSUER = 'id brand name algorithm publicKey previousExpiresAt rotatedAt livemode createdAt updatedAt';
/** An EdDSA issuer (no secret, so both fronts' answers compare whole). */
const createIssuer = async (token: string): Promise<Ids> => {
  const res = await t.http.post(`${P}/handoff/issuers`, { name: 'I', algorithm: 'EdDSA', public_key: PUBLIC_JWK }, { token });
  expect(res.status, res.text).toBe(201);
  return { issuer: res.body.id };
};
const PUBLIC_JWK = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
const CONN = 'id brand entity provider accountId grants status revokedAt livemode createdAt updatedAt';
/** A connection of a fresh external user (its own entity and account). */
const createConnection = async (token: string): Promise<Ids> => {
  const res = await t.http.post(
    `${P}/connections`,
    { external_user_id: randomUUID(), issuer: 'acme', provider: 'sandbox', account_id: randomUUID(), grants: ['a:b'] },
    { token },
  );
  expect(res.status, res.text).toBe(201);
  return { connection: res.body.id, entity: res.body.entity };
};
const TIER = 'id program name metric threshold rateBps createdAt updatedAt';
const LEDGER = `id kind entity program enrollment periodStart periodEnd sourcePeriodStart tier metric value rateBps earned amount carry
  status payout reverses reason createdAt`;
const PAYOUT = 'id amount entity program status failureReason periodEnd entries operation createdAt updatedAt';
/** A payout of the token's brand, written directly (a run's path to one is proven in test/payout/). */
const createPayout = async (token: string): Promise<Ids> => {
  const brandId = (await t.http.get(`${P}/brands?limit=1`, { token })).body.data[0].id;
  const brand = await brandRow(t, brandId);
  const id = newId('payout');
  await insertPayoutRow(t, {
    id,
    organizationId: brand.organizationId,
    brandId,
    runId: newId('payoutRun'),
    operationId: newId('operation'),
    entityId: newId('entity'),
    amount: 5n,
    periodEnd: new Date('2026-01-01T00:00:00Z'),
  });
  return { payout: id };
};
/** An unpaid ledger entry of the token's brand, written directly (accrual is proven in test/payout/). */
const createEntry = async (token: string): Promise<Ids> => {
  const { program, enrollment } = await createEnrollment(token);
  const e = await enrollmentRow(t, enrollment!);
  const p = await programRow(t, program!);
  const entry = newId('ledgerEntry');
  await insertLedgerEntry(t, {
    id: entry,
    organizationId: e.organizationId,
    brandId: p.brandId,
    programId: program!,
    enrollmentId: enrollment!,
    entityId: e.entityId,
    periodStart: new Date('2026-01-01T00:00:00Z'),
    periodEnd: new Date('2026-01-02T00:00:00Z'),
    value: 10,
    rateBps: 1000,
    earned: 1,
    carry: 0.5,
    amount: 1,
  });
  return { entry };
};
const createTier = async (token: string): Promise<Ids> => {
  const { program } = await createProgram(token);
  const res = await t.http.post(
    `${P}/programs/${program}/tiers`,
    { name: 'Gold', metric: 'sales', threshold: 100, rate_bps: 250 },
    { token },
  );
  return { program: program!, tier: res.body.tier.id };
};

const ROWS: Row[] = [
  {
    action: webhookEndpoints.create,
    call: () => ({
      rest: {
        method: 'POST',
        path: '/webhook_endpoints',
        body: { url: 'https://a.example/hook', description: 'd' },
        envelope: 'webhook_endpoint',
      },
      gql: { query: `mutation { createWebhookEndpoint(url: "https://a.example/hook", description: "d") { ${EP} } }` },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/webhook_endpoints', body: { url: 'ftp://a.example' } },
      gql: { query: 'mutation { createWebhookEndpoint(url: "ftp://a.example") { id } }' },
    }),
  },
  {
    action: webhookEndpoints.list,
    setup: createEndpoint,
    call: () => ({
      rest: { method: 'GET', path: '/webhook_endpoints?limit=1' },
      gql: {
        query: `{ webhookEndpoints(first: 1) { edges { node { ${EP} } } pageInfo { hasNextPage } } }`,
        pick: (d) => edges(d.webhookEndpoints),
      },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/webhook_endpoints?limit=0' },
      gql: { query: '{ webhookEndpoints(first: 0) { edges { cursor } } }' },
      gqlParam: 'first',
    }),
  },
  {
    action: webhookEndpoints.retrieve,
    setup: createEndpoint,
    call: (ids) => ({
      rest: { method: 'GET', path: `/webhook_endpoints/${ids.endpoint}`, envelope: 'webhook_endpoint' },
      gql: { query: `{ webhookEndpoint(id: "${ids.endpoint}") { ${EP} health { ${HEALTH} } } }` },
    }),
    unknown: { rest: { method: 'GET', path: '/webhook_endpoints/we_nope' }, gql: { query: '{ webhookEndpoint(id: "we_nope") { id } }' } },
  },
  {
    action: webhookEndpoints.update,
    setup: createEndpoint,
    call: (ids) => ({
      rest: { method: 'POST', path: `/webhook_endpoints/${ids.endpoint}`, body: { description: 'e' }, envelope: 'webhook_endpoint' },
      gql: { query: `mutation { updateWebhookEndpoint(id: "${ids.endpoint}", description: "e") { ${EP} } }` },
    }),
    bad: (ids) => ({
      rest: { method: 'POST', path: `/webhook_endpoints/${ids.endpoint}`, body: { url: 'ftp://a.example' } },
      gql: { query: `mutation { updateWebhookEndpoint(id: "${ids.endpoint}", url: "ftp://a.example") { id } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/webhook_endpoints/we_nope', body: {} },
      gql: { query: 'mutation { updateWebhookEndpoint(id: "we_nope") { id } }' },
    },
  },
  {
    action: webhookEndpoints.rotateSecret,
    setup: createEndpoint,
    call: (ids) => ({
      rest: { method: 'POST', path: `/webhook_endpoints/${ids.endpoint}/rotate_secret`, envelope: 'webhook_endpoint' },
      gql: { query: `mutation { rotateWebhookEndpointSecret(id: "${ids.endpoint}") { ${EP} } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/webhook_endpoints/we_nope/rotate_secret' },
      gql: { query: 'mutation { rotateWebhookEndpointSecret(id: "we_nope") { id } }' },
    },
  },
  {
    action: webhookEndpoints.delete,
    setup: createEndpoint,
    call: (ids) => ({
      rest: { method: 'DELETE', path: `/webhook_endpoints/${ids.endpoint}` },
      gql: { query: `mutation { deleteWebhookEndpoint(id: "${ids.endpoint}") { id deleted } }` },
    }),
    unknown: {
      rest: { method: 'DELETE', path: '/webhook_endpoints/we_nope' },
      gql: { query: 'mutation { deleteWebhookEndpoint(id: "we_nope") { id } }' },
    },
  },
  {
    action: webhookDeliveries.list,
    setup: createEndpoint,
    call: (ids) => ({
      rest: { method: 'GET', path: `/webhook_endpoints/${ids.endpoint}/deliveries` },
      gql: {
        query: `{ webhookEndpoint(id: "${ids.endpoint}") { deliveries { edges { node { id } } pageInfo { hasNextPage } } } }`,
        pick: (d) => edges(d.webhookEndpoint.deliveries),
      },
    }),
    bad: (ids) => ({
      rest: { method: 'GET', path: `/webhook_endpoints/${ids.endpoint}/deliveries?limit=101` },
      gql: { query: `{ webhookEndpoint(id: "${ids.endpoint}") { deliveries(first: 101) { edges { cursor } } } }` },
      gqlParam: 'first',
    }),
  },
  {
    action: webhookDeliveries.listForEvent,
    setup: createEvent,
    call: (ids) => ({
      rest: { method: 'GET', path: `/events/${ids.event}/deliveries` },
      gql: {
        query: `{ eventDeliveries(eventId: "${ids.event}") { edges { node { id } } pageInfo { hasNextPage } } }`,
        pick: (d) => edges(d.eventDeliveries),
      },
    }),
    bad: (ids) => ({
      rest: { method: 'GET', path: `/events/${ids.event}/deliveries?status_class=1xx` },
      gql: { query: `{ eventDeliveries(eventId: "${ids.event}", statusClass: "1xx") { edges { cursor } } }` },
      gqlParam: 'statusClass',
    }),
    unknown: {
      rest: { method: 'GET', path: '/events/evt_nope/deliveries' },
      gql: { query: '{ eventDeliveries(eventId: "evt_nope") { edges { cursor } } }' },
    },
  },
  {
    action: webhookDeliveries.retry,
    setup: createEndpoint,
    // No delivery exists to retry here: the same 404 on both is the result (test/webhook/graphql.test.ts retries real ones).
    refused: 'resource_missing',
    call: (ids) => ({
      rest: { method: 'POST', path: `/webhook_endpoints/${ids.endpoint}/deliveries/msg_nope/retry` },
      gql: { query: `mutation { retryWebhookDelivery(endpointId: "${ids.endpoint}", id: "msg_nope") { id } }` },
    }),
  },
  {
    action: webhookReplays.create,
    setup: createEndpoint,
    call: (ids) => ({
      rest: { method: 'POST', path: `/webhook_endpoints/${ids.endpoint}/replay`, body: { starting_after: 0 }, envelope: 'operation' },
      gql: {
        query: `mutation { replayWebhookEndpoint(id: "${ids.endpoint}", startingAfter: 0) { ${OP} } }`,
        pick: json('replayWebhookEndpoint'),
      },
    }),
    bad: (ids) => ({
      rest: { method: 'POST', path: `/webhook_endpoints/${ids.endpoint}/replay`, body: { starting_after: 0, until: 'soon' } },
      gql: { query: `mutation { replayWebhookEndpoint(id: "${ids.endpoint}", startingAfter: 0, until: "soon") { id } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/webhook_endpoints/we_nope/replay', body: { starting_after: 0 } },
      gql: { query: 'mutation { replayWebhookEndpoint(id: "we_nope", startingAfter: 0) { id } }' },
    },
  },
  {
    action: webhookReplays.cancel,
    setup: createEndpoint,
    // No live replay: the same 409 on both (test/webhook/replay.test.ts cancels real ones on both fronts).
    refused: 'resource_conflict',
    call: (ids) => ({
      rest: { method: 'POST', path: `/webhook_endpoints/${ids.endpoint}/replay/cancel` },
      gql: { query: `mutation { cancelWebhookEndpointReplay(id: "${ids.endpoint}") { id } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/webhook_endpoints/we_nope/replay/cancel' },
      gql: { query: 'mutation { cancelWebhookEndpointReplay(id: "we_nope") { id } }' },
    },
  },
  {
    action: eventDestinations.create,
    // `type` is an enum (REDIS) whose field name other resources use for strings; test/destination/destinations.test.ts compares it.
    volatile: ['type'],
    call: () => ({
      rest: { method: 'POST', path: '/event_destinations', body: DESTINATION, envelope: 'event_destination' },
      gql: {
        query: `mutation { createEventDestination(type: REDIS, url: "rediss://redis.example", stream: "s", description: "d") { ${ED} } }`,
      },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/event_destinations', body: { ...DESTINATION, url: 'ftp://a.example' } },
      gql: { query: 'mutation { createEventDestination(type: REDIS, url: "ftp://a.example", stream: "s") { id } }' },
    }),
  },
  {
    action: eventDestinations.list,
    // `type` is an enum (REDIS) whose field name other resources use for strings; test/destination/destinations.test.ts compares it.
    volatile: ['type'],
    setup: createDestination,
    call: () => ({
      rest: { method: 'GET', path: '/event_destinations?limit=1' },
      gql: {
        query: `{ eventDestinations(first: 1) { edges { node { ${ED} } } pageInfo { hasNextPage } } }`,
        pick: (d) => edges(d.eventDestinations),
      },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/event_destinations?limit=0' },
      gql: { query: '{ eventDestinations(first: 0) { edges { cursor } } }' },
      gqlParam: 'first',
    }),
  },
  {
    action: eventDestinations.retrieve,
    // `type` is an enum (REDIS) whose field name other resources use for strings; test/destination/destinations.test.ts compares it.
    volatile: ['type'],
    setup: createDestination,
    call: (ids) => ({
      rest: { method: 'GET', path: `/event_destinations/${ids.destination}`, envelope: 'event_destination' },
      gql: { query: `{ eventDestination(id: "${ids.destination}") { ${ED} health { ${HEALTH} } } }` },
    }),
    unknown: { rest: { method: 'GET', path: '/event_destinations/ed_nope' }, gql: { query: '{ eventDestination(id: "ed_nope") { id } }' } },
  },
  {
    action: eventDestinations.update,
    // `type` is an enum (REDIS) whose field name other resources use for strings; test/destination/destinations.test.ts compares it.
    volatile: ['type'],
    setup: createDestination,
    call: (ids) => ({
      rest: { method: 'POST', path: `/event_destinations/${ids.destination}`, body: { description: 'e' }, envelope: 'event_destination' },
      gql: { query: `mutation { updateEventDestination(id: "${ids.destination}", description: "e") { ${ED} } }` },
    }),
    bad: (ids) => ({
      rest: { method: 'POST', path: `/event_destinations/${ids.destination}`, body: { stream: '{nope}' } },
      gql: { query: `mutation { updateEventDestination(id: "${ids.destination}", stream: "{nope}") { id } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/event_destinations/ed_nope', body: {} },
      gql: { query: 'mutation { updateEventDestination(id: "ed_nope") { id } }' },
    },
  },
  {
    action: eventDestinations.rotateSecret,
    // `type` is an enum (REDIS) whose field name other resources use for strings; test/destination/destinations.test.ts compares it.
    volatile: ['type'],
    setup: createDestination,
    call: (ids) => ({
      rest: { method: 'POST', path: `/event_destinations/${ids.destination}/rotate_secret`, envelope: 'event_destination' },
      gql: { query: `mutation { rotateEventDestinationSecret(id: "${ids.destination}") { ${ED} } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/event_destinations/ed_nope/rotate_secret' },
      gql: { query: 'mutation { rotateEventDestinationSecret(id: "ed_nope") { id } }' },
    },
  },
  {
    action: eventDestinations.delete,
    setup: createDestination,
    call: (ids) => ({
      rest: { method: 'DELETE', path: `/event_destinations/${ids.destination}` },
      gql: { query: `mutation { deleteEventDestination(id: "${ids.destination}") { id deleted } }` },
    }),
    unknown: {
      rest: { method: 'DELETE', path: '/event_destinations/ed_nope' },
      gql: { query: 'mutation { deleteEventDestination(id: "ed_nope") { id } }' },
    },
  },
  {
    action: eventDestinations.listDeliveries,
    setup: createDestination,
    call: (ids) => ({
      rest: { method: 'GET', path: `/event_destinations/${ids.destination}/deliveries` },
      gql: {
        query: `{ eventDestination(id: "${ids.destination}") { deliveries { edges { node { id } } pageInfo { hasNextPage } } } }`,
        pick: (d) => edges(d.eventDestination.deliveries),
      },
    }),
    bad: (ids) => ({
      rest: { method: 'GET', path: `/event_destinations/${ids.destination}/deliveries?limit=101` },
      gql: { query: `{ eventDestination(id: "${ids.destination}") { deliveries(first: 101) { edges { cursor } } } }` },
      gqlParam: 'first',
    }),
  },
  {
    action: eventDestinations.retryDelivery,
    setup: createDestination,
    // No delivery exists to retry here: the same 404 on both is the result.
    refused: 'resource_missing',
    call: (ids) => ({
      rest: { method: 'POST', path: `/event_destinations/${ids.destination}/deliveries/msg_nope/retry` },
      gql: { query: `mutation { retryEventDestinationDelivery(destinationId: "${ids.destination}", id: "msg_nope") { id } }` },
    }),
  },
  {
    action: eventDestinations.replay,
    setup: createDestination,
    call: (ids) => ({
      rest: { method: 'POST', path: `/event_destinations/${ids.destination}/replay`, body: { starting_after: 0 }, envelope: 'operation' },
      gql: {
        query: `mutation { replayEventDestination(id: "${ids.destination}", startingAfter: 0) { ${OP} } }`,
        pick: json('replayEventDestination'),
      },
    }),
    bad: (ids) => ({
      rest: { method: 'POST', path: `/event_destinations/${ids.destination}/replay`, body: { starting_after: 0, until: 'soon' } },
      gql: { query: `mutation { replayEventDestination(id: "${ids.destination}", startingAfter: 0, until: "soon") { id } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/event_destinations/ed_nope/replay', body: { starting_after: 0 } },
      gql: { query: 'mutation { replayEventDestination(id: "ed_nope", startingAfter: 0) { id } }' },
    },
  },
  {
    action: eventDestinations.cancelReplay,
    setup: createDestination,
    // No live replay: the same 409 on both.
    refused: 'resource_conflict',
    call: (ids) => ({
      rest: { method: 'POST', path: `/event_destinations/${ids.destination}/replay/cancel` },
      gql: { query: `mutation { cancelEventDestinationReplay(id: "${ids.destination}") { id } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/event_destinations/ed_nope/replay/cancel' },
      gql: { query: 'mutation { cancelEventDestinationReplay(id: "ed_nope") { id } }' },
    },
  },
  {
    action: programs.create,
    call: () => ({
      rest: { method: 'POST', path: '/programs', body: { name: 'P', grace_period_seconds: 60 } },
      gql: { query: `mutation { createProgram(name: "P", gracePeriodSeconds: 60) { ${PROG} } }` },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/programs', body: { name: '' } },
      gql: { query: 'mutation { createProgram(name: "") { id } }' },
    }),
  },
  {
    action: events.retrieve,
    setup: createEvent,
    call: (ids) => ({
      rest: { method: 'GET', path: `/events/${ids.event}` },
      gql: { query: `{ event(id: "${ids.event}") { id type seq subject { type id } data operation brand livemode createdAt } }` },
    }),
    unknown: { rest: { method: 'GET', path: '/events/evt_nope' }, gql: { query: '{ event(id: "evt_nope") { id } }' } },
  },
  {
    action: eventTypes.list,
    call: () => ({
      rest: { method: 'GET', path: '/event_types', envelope: 'data' },
      gql: { query: '{ eventTypes { type description schema example } }', pick: (d) => camel(d.eventTypes) },
    }),
  },
  {
    action: eventTypes.retrieve,
    call: () => ({
      rest: { method: 'GET', path: '/event_types/enrollment.qualified' },
      gql: { query: '{ eventType(type: "enrollment.qualified") { type description schema example } }', pick: (d) => camel(d.eventType) },
    }),
    unknown: { rest: { method: 'GET', path: '/event_types/payout.lost' }, gql: { query: '{ eventType(type: "payout.lost") { type } }' } },
  },
  {
    action: programs.list,
    setup: createProgram,
    call: () => ({
      rest: { method: 'GET', path: '/programs?limit=1' },
      gql: { query: `{ programs(first: 1) { edges { node { ${PROG} } } pageInfo { hasNextPage } } }`, pick: (d) => edges(d.programs) },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/programs?limit=101' },
      gql: { query: '{ programs(first: 101) { edges { cursor } } }' },
      gqlParam: 'first',
    }),
    unknown: {
      rest: { method: 'GET', path: '/programs?starting_after=prog_nope' },
      gql: { query: '{ programs(after: "prog_nope") { edges { cursor } } }' },
      gqlParam: 'after',
    },
  },
  {
    action: programs.retrieve,
    setup: createProgram,
    call: (ids) => ({
      rest: { method: 'GET', path: `/programs/${ids.program}` },
      gql: { query: `{ program(id: "${ids.program}") { ${PROG} } }` },
    }),
    unknown: { rest: { method: 'GET', path: '/programs/prog_nope' }, gql: { query: '{ program(id: "prog_nope") { id } }' } },
  },
  {
    action: programs.addRequirement,
    setup: createProgram,
    call: (ids) => ({
      rest: {
        method: 'POST',
        path: `/programs/${ids.program}/requirements`,
        body: { metric: 'assert:age', operator: 'gte', threshold: 18 },
      },
      gql: {
        query: `mutation { createProgramRequirement(program: "${ids.program}", metric: "assert:age", operator: GTE, threshold: 18) { ${REQ} } }`,
      },
    }),
    bad: (ids) => ({
      rest: { method: 'POST', path: `/programs/${ids.program}/requirements`, body: { metric: 'age', operator: 'exists' } },
      gql: { query: `mutation { createProgramRequirement(program: "${ids.program}", metric: "age", operator: EXISTS) { id } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/programs/prog_nope/requirements', body: { metric: 'assert:age', operator: 'exists' } },
      gql: { query: 'mutation { createProgramRequirement(program: "prog_nope", metric: "assert:age", operator: EXISTS) { id } }' },
    },
  },
  {
    action: programs.listRequirements,
    setup: createProgram,
    call: (ids) => ({
      rest: { method: 'GET', path: `/programs/${ids.program}/requirements` },
      gql: {
        query: `{ programRequirements(program: "${ids.program}") { ${REQ} } }`,
        pick: (d) => ({ data: d.programRequirements, hasMore: false }),
      },
    }),
    unknown: {
      rest: { method: 'GET', path: '/programs/prog_nope/requirements' },
      gql: { query: '{ programRequirements(program: "prog_nope") { id } }' },
    },
  },
  {
    action: programs.removeRequirement,
    setup: createProgram,
    call: (ids) => ({
      rest: { method: 'DELETE', path: `/programs/${ids.program}/requirements/${ids.requirement}` },
      gql: { query: `mutation { deleteProgramRequirement(program: "${ids.program}", id: "${ids.requirement}") { id deleted } }` },
    }),
    unknown: {
      rest: { method: 'DELETE', path: '/programs/prog_nope/requirements/req_nope' },
      gql: { query: 'mutation { deleteProgramRequirement(program: "prog_nope", id: "req_nope") { id } }' },
    },
  },
  // Enrollments and operations (seam-a).
  {
    action: enrollments.create,
    setup: createBareProgram,
    call: (ids) => ({
      rest: { method: 'POST', path: '/enrollments', body: { program: ids.program, ...SUBJECT } },
      gql: { query: `mutation { createEnrollment(program: "${ids.program}", ${GQL_SUBJECT}) { ${ENR} } }`, pick: json('createEnrollment') },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/enrollments', body: { program: '', ...SUBJECT } },
      gql: { query: `mutation { createEnrollment(program: "", ${GQL_SUBJECT}) { id } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/enrollments', body: { program: 'prog_nope', ...SUBJECT } },
      gql: { query: `mutation { createEnrollment(program: "prog_nope", ${GQL_SUBJECT}) { id } }` },
    },
  },
  ...(['approve', 'reject', 'activate'] as const).map(
    (op): Row => ({
      action: enrollments[op],
      // Activation needs an approved enrollment; the others a pending one.
      setup: (token) => createEnrollment(token, op === 'activate' ? ['approve'] : []),
      call: (ids) => ({
        rest: { method: 'POST', path: `/enrollments/${ids.enrollment}/${op}` },
        gql: { query: `mutation { ${op}Enrollment(id: "${ids.enrollment}") { ${ENR} } }`, pick: json(`${op}Enrollment`) },
      }),
      unknown: {
        rest: { method: 'POST', path: `/enrollments/enr_nope/${op}` },
        gql: { query: `mutation { ${op}Enrollment(id: "enr_nope") { id } }` },
      },
    }),
  ),
  {
    action: enrollments.resume,
    volatile: ['entity'],
    setup: async (token) => {
      // Paused by the end of its relationship, with a new relationship since (a fresh user per front).
      const { program } = await createBareProgram(token);
      const res = await t.http.post(`${P}/enrollments`, { program, external_user_id: randomUUID(), issuer: 'acme' }, { token });
      for (const m of ['approve', 'activate']) await t.http.post(`${P}/enrollments/${res.body.id}/${m}`, undefined, { token });
      const rel = await t.http.post(`${P}/relationships`, { entity: res.body.entity }, { token });
      await t.http.post(`${P}/relationships/${rel.body.id}/end`, undefined, { token });
      expect((await t.http.post(`${P}/relationships`, { entity: res.body.entity }, { token })).status).toBe(201);
      return { enrollment: res.body.id };
    },
    call: (ids) => ({
      rest: { method: 'POST', path: `/enrollments/${ids.enrollment}/resume` },
      gql: { query: `mutation { resumeEnrollment(id: "${ids.enrollment}") { ${ENR} } }`, pick: json('resumeEnrollment') },
    }),
    unknown: {
      rest: { method: 'POST', path: '/enrollments/enr_nope/resume' },
      gql: { query: 'mutation { resumeEnrollment(id: "enr_nope") { id } }' },
    },
  },
  {
    action: enrollments.list,
    setup: (token) => createEnrollment(token),
    call: (ids) => ({
      rest: {
        method: 'GET',
        path: `/enrollments?program=${ids.program}&external_user_id=${SUBJECT.external_user_id}&issuer=${SUBJECT.issuer}`,
      },
      gql: {
        query: `{ enrollments(program: "${ids.program}", ${GQL_SUBJECT}) { edges { node { ${ENR} } } pageInfo { hasNextPage } } }`,
        pick: (d) => camel(edges(d.enrollments)),
      },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/enrollments?limit=0' },
      gql: { query: '{ enrollments(first: 0) { edges { cursor } } }' },
      gqlParam: 'first',
    }),
    unknown: {
      rest: { method: 'GET', path: '/enrollments?starting_after=enr_nope' },
      gql: { query: '{ enrollments(after: "enr_nope") { edges { cursor } } }' },
      gqlParam: 'after',
    },
  },
  {
    action: enrollments.retrieve,
    setup: (token) => createEnrollment(token, ['approve', 'activate']),
    call: (ids) => ({
      rest: { method: 'GET', path: `/enrollments/${ids.enrollment}` },
      gql: { query: `{ enrollment(id: "${ids.enrollment}") { ${ENR} } }`, pick: json('enrollment') },
    }),
    unknown: { rest: { method: 'GET', path: '/enrollments/enr_nope' }, gql: { query: '{ enrollment(id: "enr_nope") { id } }' } },
  },
  {
    action: operations.list,
    setup: launched,
    call: () => ({
      rest: { method: 'GET', path: '/operations?subject_type=distribution&limit=1' },
      gql: {
        query: `{ operations(subjectType: "distribution", first: 1) { edges { node { ${OP} } } pageInfo { hasNextPage } } }`,
        pick: (d) => camel(edges(d.operations)),
      },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/operations?subject_type=' },
      gql: { query: '{ operations(subjectType: "") { edges { cursor } } }' },
      gqlParam: 'subjectType',
    }),
    unknown: {
      rest: { method: 'GET', path: '/operations?starting_after=op_nope' },
      gql: { query: '{ operations(after: "op_nope") { edges { cursor } } }' },
      gqlParam: 'after',
    },
  },
  {
    action: operations.retrieve,
    setup: launched,
    call: (ids) => ({
      rest: { method: 'GET', path: `/operations/${ids.operation}`, envelope: 'operation' },
      gql: { query: `{ operation(id: "${ids.operation}") { ${OP} } }`, pick: json('operation') },
    }),
    unknown: { rest: { method: 'GET', path: '/operations/op_nope' }, gql: { query: '{ operation(id: "op_nope") { id } }' } },
  },
  // seam-b: assertions, distributions, deployments
  {
    action: assertions.create,
    volatile: ['entity', 'effectiveAt'],
    setup: async () => ({ user: randomUUID() }),
    call: (ids) => ({
      rest: { method: 'POST', path: '/assertions', body: { external_user_id: ids.user, issuer: 'acme', key: 'verified', value: 2 } },
      gql: { query: `mutation { createAssertion(externalUserId: "${ids.user}", issuer: "acme", key: "verified", value: 2) { ${ASRT} } }` },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/assertions', body: { external_user_id: 'u', issuer: 'acme', key: 'Not-A-Key' } },
      gql: { query: 'mutation { createAssertion(externalUserId: "u", issuer: "acme", key: "Not-A-Key") { id } }' },
    }),
    unknown: {
      rest: { method: 'POST', path: '/assertions', body: { entity: 'ent_nope', key: 'verified' } },
      gql: { query: 'mutation { createAssertion(entity: "ent_nope", key: "verified") { id } }' },
    },
  },
  {
    action: assertions.revoke,
    volatile: ['entity', 'effectiveAt'],
    setup: createAssertion,
    call: (ids) => ({
      rest: { method: 'POST', path: '/assertions/revoke', body: { external_user_id: ids.user, issuer: 'acme', key: 'verified' } },
      gql: {
        query: `mutation { revokeAssertion(externalUserId: "${ids.user}", issuer: "acme", key: "verified") { entity key revoked assertion { ${ASRT} } } }`,
      },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/assertions/revoke', body: { external_user_id: 'u', issuer: 'acme', key: '' } },
      gql: { query: 'mutation { revokeAssertion(externalUserId: "u", issuer: "acme", key: "") { revoked } }' },
    }),
  },
  {
    action: assertions.list,
    volatile: ['entity', 'effectiveAt'],
    setup: createAssertion,
    call: (ids) => ({
      rest: { method: 'GET', path: `/assertions?external_user_id=${ids.user}&issuer=acme&limit=1` },
      gql: {
        query: `{ assertions(externalUserId: "${ids.user}", issuer: "acme", first: 1) { edges { node { ${ASRT} } } pageInfo { hasNextPage } } }`,
        pick: (d) => edges(d.assertions),
      },
    }),
    bad: (ids) => ({
      rest: { method: 'GET', path: `/assertions?external_user_id=${ids.user}&issuer=acme&limit=0` },
      gql: { query: `{ assertions(externalUserId: "${ids.user}", issuer: "acme", first: 0) { edges { cursor } } }` },
      gqlParam: 'first',
    }),
    unknown: {
      rest: { method: 'GET', path: '/assertions?external_user_id=u&issuer=acme&starting_after=asrt_nope' },
      gql: { query: '{ assertions(externalUserId: "u", issuer: "acme", after: "asrt_nope") { edges { cursor } } }' },
      gqlParam: 'after',
    },
  },
  {
    action: assertions.retrieve,
    volatile: ['entity', 'effectiveAt'],
    setup: createAssertion,
    call: (ids) => ({
      rest: { method: 'GET', path: `/assertions/${ids.assertion}` },
      gql: { query: `{ assertion(id: "${ids.assertion}") { ${ASRT} } }` },
    }),
    unknown: { rest: { method: 'GET', path: '/assertions/asrt_nope' }, gql: { query: '{ assertion(id: "asrt_nope") { id } }' } },
  },
  {
    action: distributions.create,
    call: () => ({
      rest: {
        method: 'POST',
        path: '/distributions',
        body: { name: 'D', budget: 0, deployments: [{ provider: 'sandbox' }] },
        envelope: 'distribution',
      },
      gql: {
        query: `mutation { createDistribution(name: "D", budget: 0, deployments: [{ provider: "sandbox" }]) { distribution { ${DIST} } } }`,
        pick: (d) => d.createDistribution.distribution,
      },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/distributions', body: { name: '', budget: 0, deployments: [{ provider: 'sandbox' }] } },
      gql: { query: 'mutation { createDistribution(name: "", budget: 0, deployments: [{ provider: "sandbox" }]) { operation { id } } }' },
    }),
  },
  {
    action: distributions.validate,
    call: () => ({
      rest: { method: 'POST', path: '/distributions/validate', body: { name: 'D', budget: 5, deployments: [{ provider: 'sandbox' }] } },
      gql: {
        query:
          'mutation { validateDistribution(name: "D", budget: 5, deployments: [{ provider: "sandbox" }]) { valid brand budget plannedSpend deployments walletBalance fundingSufficient } }',
      },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/distributions/validate', body: { name: 'D', budget: 0, deployments: [{ provider: 'nope' }] } },
      gql: { query: 'mutation { validateDistribution(name: "D", budget: 0, deployments: [{ provider: "nope" }]) { valid } }' },
    }),
  },
  {
    action: distributions.list,
    setup: launched,
    call: () => ({
      rest: { method: 'GET', path: '/distributions?limit=1' },
      gql: {
        query: `{ distributions(first: 1) { edges { node { ${DIST} } } pageInfo { hasNextPage } } }`,
        pick: (d) => edges(d.distributions),
      },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/distributions?limit=101' },
      gql: { query: '{ distributions(first: 101) { edges { cursor } } }' },
      gqlParam: 'first',
    }),
    unknown: {
      rest: { method: 'GET', path: '/distributions?starting_after=dist_nope' },
      gql: { query: '{ distributions(after: "dist_nope") { edges { cursor } } }' },
      gqlParam: 'after',
    },
  },
  {
    action: distributions.retrieve,
    setup: launched,
    call: (ids) => ({
      rest: { method: 'GET', path: `/distributions/${ids.distribution}`, envelope: 'distribution' },
      gql: { query: `{ distribution(id: "${ids.distribution}") { ${DIST} } }` },
    }),
    unknown: { rest: { method: 'GET', path: '/distributions/dist_nope' }, gql: { query: '{ distribution(id: "dist_nope") { id } }' } },
  },
  {
    action: distributions.launch,
    setup: (token) => launched(token, { outcome: 'fail' }),
    call: distributionVerb('launch', 'launchDistribution'),
    unknown: unknownDistribution('launch', 'launchDistribution'),
  },
  {
    action: distributions.pause,
    setup: launched,
    call: distributionVerb('pause', 'pauseDistribution'),
    unknown: unknownDistribution('pause', 'pauseDistribution'),
  },
  {
    action: distributions.resume,
    setup: paused,
    call: distributionVerb('resume', 'resumeDistribution'),
    unknown: unknownDistribution('resume', 'resumeDistribution'),
  },
  {
    action: distributions.cancel,
    setup: launched,
    call: distributionVerb('cancel', 'cancelDistribution'),
    unknown: unknownDistribution('cancel', 'cancelDistribution'),
  },
  {
    action: deployments.list,
    volatile: ['distribution'],
    setup: launched,
    call: (ids) => ({
      rest: { method: 'GET', path: `/deployments?distribution=${ids.distribution}&limit=1` },
      gql: {
        query: `{ deployments(distribution: "${ids.distribution}", first: 1) { edges { node { ${DEP} } } pageInfo { hasNextPage } } }`,
        pick: (d) => camel(edges(d.deployments)),
      },
    }),
    unknown: {
      rest: { method: 'GET', path: '/deployments?distribution=dist_nope' },
      gql: { query: '{ deployments(distribution: "dist_nope") { edges { cursor } } }' },
    },
  },
  {
    action: deployments.retrieve,
    volatile: ['distribution'],
    setup: launched,
    call: (ids) => ({
      rest: { method: 'GET', path: `/deployments/${ids.deployment}`, envelope: 'deployment' },
      gql: { query: `{ deployment(id: "${ids.deployment}") { ${DEP} } }`, pick: json('deployment') },
    }),
    unknown: { rest: { method: 'GET', path: '/deployments/dep_nope' }, gql: { query: '{ deployment(id: "dep_nope") { id } }' } },
  },
  {
    action: tiers.create,
    setup: createProgram,
    call: (ids) => ({
      rest: {
        method: 'POST',
        path: `/programs/${ids.program}/tiers`,
        body: { name: 'Gold', metric: 'sales', threshold: 100, rate_bps: 250 },
        envelope: 'tier',
      },
      gql: {
        query: `mutation { createProgramTier(program: "${ids.program}", name: "Gold", metric: "sales", threshold: 100, rateBps: 250) { tier { ${TIER} } } }`,
        pick: (d) => d.createProgramTier.tier,
      },
    }),
    bad: (ids) => ({
      rest: { method: 'POST', path: `/programs/${ids.program}/tiers`, body: { name: 'Gold', metric: 'Sales', threshold: 1, rate_bps: 1 } },
      gql: {
        query: `mutation { createProgramTier(program: "${ids.program}", name: "Gold", metric: "Sales", threshold: 1, rateBps: 1) { tier { id } } }`,
      },
    }),
    unknown: {
      rest: { method: 'POST', path: '/programs/prog_nope/tiers', body: { name: 'Gold', metric: 'sales', threshold: 1, rate_bps: 1 } },
      gql: {
        query:
          'mutation { createProgramTier(program: "prog_nope", name: "Gold", metric: "sales", threshold: 1, rateBps: 1) { tier { id } } }',
      },
    },
  },
  {
    action: tiers.list,
    setup: createTier,
    call: (ids) => ({
      rest: { method: 'GET', path: `/programs/${ids.program}/tiers` },
      gql: { query: `{ programTiers(program: "${ids.program}") { ${TIER} } }`, pick: (d) => ({ data: d.programTiers, hasMore: false }) },
    }),
    unknown: {
      rest: { method: 'GET', path: '/programs/prog_nope/tiers' },
      gql: { query: '{ programTiers(program: "prog_nope") { id } }' },
    },
  },
  {
    action: tiers.update,
    setup: createTier,
    call: (ids) => ({
      rest: { method: 'POST', path: `/programs/${ids.program}/tiers/${ids.tier}`, body: { rate_bps: 300 }, envelope: 'tier' },
      gql: {
        query: `mutation { updateProgramTier(program: "${ids.program}", id: "${ids.tier}", rateBps: 300) { tier { ${TIER} } } }`,
        pick: (d) => d.updateProgramTier.tier,
      },
    }),
    bad: (ids) => ({
      rest: { method: 'POST', path: `/programs/${ids.program}/tiers/${ids.tier}`, body: { rate_bps: -1 } },
      gql: { query: `mutation { updateProgramTier(program: "${ids.program}", id: "${ids.tier}", rateBps: -1) { tier { id } } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/programs/prog_nope/tiers/tier_nope', body: { rate_bps: 1 } },
      gql: { query: 'mutation { updateProgramTier(program: "prog_nope", id: "tier_nope", rateBps: 1) { tier { id } } }' },
    },
  },
  {
    action: tiers.remove,
    setup: createTier,
    call: (ids) => ({
      rest: { method: 'DELETE', path: `/programs/${ids.program}/tiers/${ids.tier}`, envelope: 'tier' },
      gql: {
        query: `mutation { deleteProgramTier(program: "${ids.program}", id: "${ids.tier}") { tier { id deleted } } }`,
        pick: (d) => d.deleteProgramTier.tier,
      },
    }),
    unknown: {
      rest: { method: 'DELETE', path: '/programs/prog_nope/tiers/tier_nope' },
      gql: { query: 'mutation { deleteProgramTier(program: "prog_nope", id: "tier_nope") { tier { id } } }' },
    },
  },
  {
    action: performance.record,
    volatile: ['entity'],
    setup: async () => ({ user: randomUUID() }),
    call: (ids) => ({
      rest: {
        method: 'POST',
        path: '/performance/measurements',
        body: {
          measurements: [{ external_user_id: ids.user, issuer: 'acme', metric: 'sales', value: 2.5, occurred_at: '2026-01-05T00:00:00Z' }],
        },
      },
      gql: {
        query: `mutation { recordMeasurements(measurements: [{ externalUserId: "${ids.user}", issuer: "acme", metric: "sales", value: 2.5, occurredAt: "2026-01-05T00:00:00Z" }]) { recorded duplicates data { ${MSR} } } }`,
      },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/performance/measurements', body: { measurements: [] } },
      gql: { query: 'mutation { recordMeasurements(measurements: []) { recorded } }' },
    }),
    unknown: {
      rest: {
        method: 'POST',
        path: '/performance/measurements',
        body: { measurements: [{ entity: 'ent_nope', metric: 'sales', value: 1, occurred_at: '2026-01-05T00:00:00Z' }] },
      },
      gql: {
        query:
          'mutation { recordMeasurements(measurements: [{ entity: "ent_nope", metric: "sales", value: 1, occurredAt: "2026-01-05T00:00:00Z" }]) { recorded } }',
      },
    },
  },
  {
    action: performance.rollups,
    volatile: ['entity'],
    setup: async (token) => {
      const user = randomUUID();
      const m = { external_user_id: user, issuer: 'acme', metric: 'sales', value: 4, occurred_at: '2026-01-05T10:00:00Z' };
      const res = await rest(token, { method: 'POST', path: '/performance/measurements', body: { measurements: [m] } });
      return { entity: res.body.data[0].entity };
    },
    call: (ids) => ({
      rest: { method: 'GET', path: `/performance/rollups?entity=${ids.entity}&metric=sales&window=week` },
      gql: {
        query: `{ performanceRollups(entity: "${ids.entity}", metric: "sales", window: WEEK) { data { metric window periodStart periodEnd entity program value count } hasMore } }`,
        pick: (d) => d.performanceRollups,
      },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/performance/rollups?metric=sales&window=day&limit=0' },
      gql: { query: '{ performanceRollups(metric: "sales", window: DAY, limit: 0) { hasMore } }' },
    }),
    unknown: {
      rest: { method: 'GET', path: '/performance/rollups?entity=ent_nope&metric=sales&window=day' },
      gql: { query: '{ performanceRollups(entity: "ent_nope", metric: "sales", window: DAY) { hasMore } }' },
    },
  },
  {
    action: brands.list,
    call: () => ({
      rest: { method: 'GET', path: '/brands?limit=1' },
      gql: { query: `{ brands(first: 1) { edges { node { ${BRAND} } } pageInfo { hasNextPage } } }`, pick: (d) => edges(d.brands) },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/brands?limit=0' },
      gql: { query: '{ brands(first: 0) { edges { cursor } } }' },
      gqlParam: 'first',
    }),
    unknown: {
      rest: { method: 'GET', path: '/brands?starting_after=brand_nope' },
      gql: { query: '{ brands(after: "brand_nope") { edges { cursor } } }' },
      gqlParam: 'after',
    },
  },
  {
    action: brands.retrieve,
    setup: async (token) => ({ brand: (await rest(token, { method: 'GET', path: '/brands' })).body.data[1].id }),
    call: (ids) => ({
      rest: { method: 'GET', path: `/brands/${ids.brand}` },
      gql: { query: `{ brand(id: "${ids.brand}") { ${BRAND} } }` },
    }),
    unknown: { rest: { method: 'GET', path: '/brands/brand_nope' }, gql: { query: '{ brand(id: "brand_nope") { id } }' } },
  },
  {
    action: entities.list,
    volatile: ['externalUserId'],
    setup: (token) => createRelationship(token),
    call: (ids) => ({
      rest: { method: 'GET', path: `/entities?external_user_id=${ids.user}&issuer=acme` },
      gql: {
        query: `{ entities(externalUserId: "${ids.user}", issuer: "acme") { edges { node { ${ENTITY} } } pageInfo { hasNextPage } } }`,
        pick: (d) => edges(d.entities),
      },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/entities?external_user_id=a' },
      gql: { query: '{ entities(externalUserId: "a") { edges { cursor } } }' },
    }),
    unknown: {
      rest: { method: 'GET', path: '/entities?starting_after=ent_nope' },
      gql: { query: '{ entities(after: "ent_nope") { edges { cursor } } }' },
      gqlParam: 'after',
    },
  },
  {
    action: entities.retrieve,
    volatile: ['externalUserId'],
    setup: (token) => createRelationship(token),
    call: (ids) => ({
      rest: { method: 'GET', path: `/entities/${ids.entity}` },
      gql: { query: `{ entity(id: "${ids.entity}") { ${ENTITY} } }` },
    }),
    unknown: { rest: { method: 'GET', path: '/entities/ent_nope' }, gql: { query: '{ entity(id: "ent_nope") { id } }' } },
  },
  {
    action: relationships.create,
    volatile: ['entity'],
    setup: async () => ({ user: randomUUID() }),
    call: (ids) => ({
      rest: { method: 'POST', path: '/relationships', body: { external_user_id: ids.user, issuer: 'acme' } },
      gql: { query: `mutation { createRelationship(externalUserId: "${ids.user}", issuer: "acme") { ${RELATIONSHIP} } }` },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/relationships', body: { external_user_id: 'a' } },
      gql: { query: 'mutation { createRelationship(externalUserId: "a") { id } }' },
    }),
    unknown: {
      rest: { method: 'POST', path: '/relationships', body: { entity: 'ent_nope' } },
      gql: { query: 'mutation { createRelationship(entity: "ent_nope") { id } }' },
    },
  },
  ...(
    [
      ['activate', []],
      ['pause', ['activate']],
      ['resume', ['activate', 'pause']],
      ['end', ['activate']],
    ] as const
  ).map(
    ([op, before]): Row => ({
      action: relationships[op],
      volatile: ['entity', 'endedAt'],
      setup: (token) => createRelationship(token, [...before]),
      call: (ids) => ({
        rest: { method: 'POST', path: `/relationships/${ids.relationship}/${op}` },
        gql: { query: `mutation { ${op}Relationship(id: "${ids.relationship}") { ${RELATIONSHIP} } }` },
      }),
      unknown: {
        rest: { method: 'POST', path: `/relationships/rel_nope/${op}` },
        gql: { query: `mutation { ${op}Relationship(id: "rel_nope") { id } }` },
      },
    }),
  ),
  {
    action: relationships.list,
    volatile: ['entity'],
    setup: (token) => createRelationship(token),
    call: () => ({
      rest: { method: 'GET', path: '/relationships?limit=1' },
      gql: {
        query: `{ relationships(first: 1) { edges { node { ${RELATIONSHIP} } } pageInfo { hasNextPage } } }`,
        pick: (d) => edges(d.relationships),
      },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/relationships?limit=0' },
      gql: { query: '{ relationships(first: 0) { edges { cursor } } }' },
      gqlParam: 'first',
    }),
    unknown: {
      rest: { method: 'GET', path: '/relationships?starting_after=rel_nope' },
      gql: { query: '{ relationships(after: "rel_nope") { edges { cursor } } }' },
      gqlParam: 'after',
    },
  },
  {
    action: relationships.retrieve,
    volatile: ['entity'],
    setup: (token) => createRelationship(token),
    call: (ids) => ({
      rest: { method: 'GET', path: `/relationships/${ids.relationship}` },
      gql: { query: `{ relationship(id: "${ids.relationship}") { ${RELATIONSHIP} } }` },
    }),
    unknown: {
      rest: { method: 'GET', path: '/relationships/rel_nope' },
      gql: { query: '{ relationship(id: "rel_nope") { id } }' },
    },
  },
  {
    action: ledger.list,
    call: () => ({
      rest: { method: 'GET', path: '/payouts/ledger?limit=1' },
      gql: {
        query: `{ ledgerEntries(first: 1) { edges { node { ${LEDGER} } } pageInfo { hasNextPage } } }`,
        pick: (d) => edges(d.ledgerEntries),
      },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/payouts/ledger?limit=0' },
      gql: { query: '{ ledgerEntries(first: 0) { edges { cursor } } }' },
      gqlParam: 'first',
    }),
    unknown: {
      rest: { method: 'GET', path: '/payouts/ledger?starting_after=le_nope' },
      gql: { query: '{ ledgerEntries(after: "le_nope") { edges { cursor } } }' },
      gqlParam: 'after',
    },
  },
  {
    action: ledger.reverse,
    setup: createEntry,
    volatile: ['program', 'enrollment', 'reverses'],
    call: (ids) => ({
      rest: { method: 'POST', path: `/payouts/ledger/${ids.entry}/reverse`, body: { reason: 'parity' }, envelope: 'ledger_entry' },
      gql: {
        query: `mutation { reverseLedgerEntry(id: "${ids.entry}", reason: "parity") { ${LEDGER} } }`,
        // kind is an enum in GraphQL only here (an operation's kind is a string): compared as REST spells it.
        pick: (d) => ({ ...d.reverseLedgerEntry, kind: d.reverseLedgerEntry.kind.toLowerCase() }),
      },
    }),
    bad: (ids) => ({
      rest: { method: 'POST', path: `/payouts/ledger/${ids.entry}/reverse`, body: { reason: '' } },
      gql: { query: `mutation { reverseLedgerEntry(id: "${ids.entry}", reason: "") { id } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/payouts/ledger/le_nope/reverse', body: { reason: 'parity' } },
      gql: { query: 'mutation { reverseLedgerEntry(id: "le_nope", reason: "parity") { id } }' },
    },
  },
  {
    action: payouts.list,
    setup: createPayout,
    volatile: ['entries', 'operation', 'entity'],
    call: () => ({
      rest: { method: 'GET', path: '/payouts?limit=1' },
      gql: { query: `{ payouts(first: 1) { edges { node { ${PAYOUT} } } pageInfo { hasNextPage } } }`, pick: (d) => edges(d.payouts) },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/payouts?limit=0' },
      gql: { query: '{ payouts(first: 0) { edges { cursor } } }' },
      gqlParam: 'first',
    }),
    unknown: {
      rest: { method: 'GET', path: '/payouts?starting_after=po_nope' },
      gql: { query: '{ payouts(after: "po_nope") { edges { cursor } } }' },
      gqlParam: 'after',
    },
  },
  {
    action: payouts.retrieve,
    setup: createPayout,
    volatile: ['entries', 'operation', 'entity'],
    call: (ids) => ({
      rest: { method: 'GET', path: `/payouts/${ids.payout}` },
      gql: { query: `{ payout(id: "${ids.payout}") { ${PAYOUT} } }` },
    }),
    unknown: {
      rest: { method: 'GET', path: '/payouts/po_nope' },
      gql: { query: '{ payout(id: "po_nope") { id } }' },
    },
  },
  {
    action: payouts.run,
    setup: createProgram,
    volatile: ['run'],
    call: (ids) => ({
      rest: {
        method: 'POST',
        path: '/payouts/runs',
        body: { program: ids.program, period_end: '2026-01-01T00:00:00Z' },
        envelope: 'operation',
      },
      gql: {
        query: `mutation { runPayouts(program: "${ids.program}", periodEnd: "2026-01-01T00:00:00Z") { ${OP} } }`,
        pick: json('runPayouts'),
      },
    }),
    bad: (ids) => ({
      rest: { method: 'POST', path: '/payouts/runs', body: { program: ids.program, period_end: 'soon' } },
      gql: { query: `mutation { runPayouts(program: "${ids.program}", periodEnd: "soon") { id } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/payouts/runs', body: { program: 'prog_nope', period_end: '2026-01-01T00:00:00Z' } },
      gql: { query: 'mutation { runPayouts(program: "prog_nope", periodEnd: "2026-01-01T00:00:00Z") { id } }' },
    },
  },
  {
    action: payouts.cancelRun,
    // No such run: the same 404 on both (test/payout/runs.test.ts cancels a real one).
    refused: 'resource_missing',
    call: () => ({
      rest: { method: 'POST', path: '/payouts/runs/op_00000000000000000000000000000000/cancel' },
      gql: { query: 'mutation { cancelPayoutRun(id: "op_00000000000000000000000000000000") { id } }' },
    }),
    unknown: {
      rest: { method: 'POST', path: '/payouts/runs/op_nope/cancel' },
      gql: { query: 'mutation { cancelPayoutRun(id: "op_nope") { id } }' },
    },
  },
  {
    action: connections.create,
    volatile: ['entity', 'accountId'],
    setup: async () => ({ user: randomUUID() }),
    call: (ids) => ({
      rest: {
        method: 'POST',
        path: '/connections',
        body: { external_user_id: ids.user, issuer: 'acme', provider: 'sandbox', account_id: ids.user, grants: ['a'] },
      },
      gql: {
        query: `mutation { createConnection(externalUserId: "${ids.user}", issuer: "acme", provider: "sandbox", accountId: "${ids.user}", grants: ["a"]) { ${CONN} } }`,
      },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/connections', body: { entity: 'ent_x', provider: 'Bad', account_id: 'a' } },
      gql: { query: 'mutation { createConnection(entity: "ent_x", provider: "Bad", accountId: "a") { id } }' },
    }),
    unknown: {
      rest: { method: 'POST', path: '/connections', body: { entity: 'ent_nope', provider: 'sandbox', account_id: 'a' } },
      gql: { query: 'mutation { createConnection(entity: "ent_nope", provider: "sandbox", accountId: "a") { id } }' },
    },
  },
  {
    action: connections.revoke,
    volatile: ['entity', 'accountId', 'revokedAt'],
    setup: createConnection,
    call: (ids) => ({
      rest: { method: 'POST', path: `/connections/${ids.connection}/revoke` },
      gql: { query: `mutation { revokeConnection(id: "${ids.connection}") { connection { ${CONN} } teardowns { id } } }` },
    }),
    unknown: {
      rest: { method: 'POST', path: '/connections/conn_nope/revoke' },
      gql: { query: 'mutation { revokeConnection(id: "conn_nope") { teardowns { id } } }' },
    },
  },
  {
    action: connections.list,
    volatile: ['entity', 'accountId'],
    setup: createConnection,
    call: () => ({
      rest: { method: 'GET', path: '/connections?limit=1' },
      gql: {
        query: `{ connections(first: 1) { edges { node { ${CONN} } } pageInfo { hasNextPage } } }`,
        pick: (d) => edges(d.connections),
      },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/connections?provider=Bad' },
      gql: { query: '{ connections(provider: "Bad") { edges { cursor } } }' },
    }),
    unknown: {
      rest: { method: 'GET', path: '/connections?starting_after=conn_nope' },
      gql: { query: '{ connections(after: "conn_nope") { edges { cursor } } }' },
      gqlParam: 'after',
    },
  },
  {
    action: connections.retrieve,
    volatile: ['entity', 'accountId'],
    setup: createConnection,
    call: (ids) => ({
      rest: { method: 'GET', path: `/connections/${ids.connection}` },
      gql: { query: `{ connection(id: "${ids.connection}") { ${CONN} } }` },
    }),
    unknown: { rest: { method: 'GET', path: '/connections/conn_nope' }, gql: { query: '{ connection(id: "conn_nope") { id } }' } },
  },
  {
    action: connectConfig.retrieve,
    call: () => ({
      rest: { method: 'GET', path: '/connect_config' },
      gql: { query: `{ connectConfig { ${CFG} } }` },
    }),
  },
  {
    action: connectConfig.update,
    volatile: ['defaultProgram'],
    setup: createBareProgram,
    call: (ids) => ({
      rest: {
        method: 'POST',
        path: '/connect_config',
        body: { allowed_origins: ['https://a.example'], default_program: ids.program, display_name: 'A', primary_color: '#000000' },
      },
      gql: {
        query: `mutation { updateConnectConfig(allowedOrigins: ["https://a.example"], defaultProgram: "${ids.program}", displayName: "A", primaryColor: "#000000") { ${CFG} } }`,
      },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/connect_config', body: { allowed_origins: ['https://a.example/x'] } },
      gql: { query: 'mutation { updateConnectConfig(allowedOrigins: ["https://a.example/x"]) { brand } }' },
    }),
    unknown: {
      rest: { method: 'POST', path: '/connect_config', body: { default_program: 'prog_nope' } },
      gql: { query: 'mutation { updateConnectConfig(defaultProgram: "prog_nope") { brand } }' },
    },
  },
  {
    action: handoffIssuers.create,
    call: () => ({
      rest: { method: 'POST', path: '/handoff/issuers', body: { name: 'I', algorithm: 'EdDSA', public_key: PUBLIC_JWK } },
      gql: {
        query: `mutation($k: JSON) { createHandoffIssuer(name: "I", algorithm: "EdDSA", publicKey: $k) { ${ISSUER} } }`,
        vars: { k: PUBLIC_JWK },
      },
    }),
    bad: () => ({
      rest: { method: 'POST', path: '/handoff/issuers', body: { name: 'I', algorithm: 'EdDSA', public_key: 'nope' } },
      gql: { query: 'mutation { createHandoffIssuer(name: "I", algorithm: "EdDSA", publicKey: "nope") { id } }' },
    }),
  },
  {
    action: handoffIssuers.rotate,
    volatile: ['rotatedAt', 'previousExpiresAt'],
    setup: createIssuer,
    call: (ids) => ({
      rest: { method: 'POST', path: `/handoff/issuers/${ids.issuer}/rotate`, body: { public_key: PUBLIC_JWK } },
      gql: {
        query: `mutation($k: JSON) { rotateHandoffIssuer(id: "${ids.issuer}", publicKey: $k) { ${ISSUER} } }`,
        vars: { k: PUBLIC_JWK },
      },
    }),
    unknown: {
      rest: { method: 'POST', path: '/handoff/issuers/iss_nope/rotate', body: {} },
      gql: { query: 'mutation { rotateHandoffIssuer(id: "iss_nope") { id } }' },
    },
  },
  {
    action: handoffIssuers.delete,
    setup: createIssuer,
    call: (ids) => ({
      rest: { method: 'DELETE', path: `/handoff/issuers/${ids.issuer}` },
      gql: { query: `mutation { deleteHandoffIssuer(id: "${ids.issuer}") { id deleted } }` },
    }),
    unknown: {
      rest: { method: 'DELETE', path: '/handoff/issuers/iss_nope' },
      gql: { query: 'mutation { deleteHandoffIssuer(id: "iss_nope") { id } }' },
    },
  },
  {
    action: handoffIssuers.list,
    setup: createIssuer,
    call: () => ({
      rest: { method: 'GET', path: '/handoff/issuers?limit=1' },
      gql: {
        query: `{ handoffIssuers(first: 1) { edges { node { ${ISSUER} } } pageInfo { hasNextPage } } }`,
        pick: (d) => edges(d.handoffIssuers),
      },
    }),
    bad: () => ({
      rest: { method: 'GET', path: '/handoff/issuers?limit=0' },
      gql: { query: '{ handoffIssuers(first: 0) { edges { cursor } } }' },
      gqlParam: 'first',
    }),
    unknown: {
      rest: { method: 'GET', path: '/handoff/issuers?starting_after=iss_nope' },
      gql: { query: '{ handoffIssuers(after: "iss_nope") { edges { cursor } } }' },
      gqlParam: 'after',
    },
  },
  {
    action: handoffIssuers.retrieve,
    setup: createIssuer,
    call: (ids) => ({
      rest: { method: 'GET', path: `/handoff/issuers/${ids.issuer}` },
      gql: { query: `{ handoffIssuer(id: "${ids.issuer}") { ${ISSUER} } }` },
    }),
    unknown: { rest: { method: 'GET', path: '/handoff/issuers/iss_nope' }, gql: { query: '{ handoffIssuer(id: "iss_nope") { id } }' } },
  },
];

/** Fields whose GraphQL type is an enum: REST's lower-case value is GraphQL's SCREAMING_CASE one (CHANGELOG.md). */
const ENUM_FIELDS = new Set(['status', 'disabled_reason', 'ordering', 'operator', 'standing', 'action', 'performance_window', 'window']);
const camel = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(camel);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => k !== 'object')
      .map(([k, x]) => [
        k.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()),
        ENUM_FIELDS.has(k) && typeof x === 'string' ? x.toUpperCase() : camel(x),
      ]),
  );
};
/** What differs between two objects made the same way: their ids, times and secrets. */
const VOLATILE = ['id', 'program', 'secret', 'createdAt', 'updatedAt', 'rotatedAt'];
const shape = (v: unknown, volatile = new Set(VOLATILE)): unknown => {
  if (Array.isArray(v)) return v.map((x) => shape(x, volatile));
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, volatile.has(k) ? typeof x : shape(x, volatile)]));
};
const firstError = (g: any) => g.body.errors?.[0]?.extensions ?? {};

async function sameError(token: string, c: Call & { gqlParam?: string }, code: string) {
  const [r, g] = await Promise.all([rest(token, c.rest), gql(token, c.gql)]);
  expect(r.body.error?.code, r.text).toBe(code);
  expect(firstError(g).code, g.text).toBe(code);
  expect(firstError(g).param ?? null).toBe(c.gqlParam ?? r.body.error.param);
  return { r, g };
}

test('every action declared for both fronts has a REST route and a GraphQL field bound to it, and a row below', () => {
  const routes = restActionRoutes(t.app.deps);
  const bound = boundFields(schema);
  for (const action of ALL) {
    const route = routes.find((r) => r.action === action);
    expect(route?.scope, action.name).toBe(action.fronts.includes('rest') ? action.scope : undefined);
    expect(bound.has(action.name), action.name).toBe(action.fronts.includes('graphql'));
  }
  const both = ALL.filter((a) => a.fronts.includes('rest') && a.fronts.includes('graphql'));
  expect(ROWS.map((r) => r.action.name).sort()).toEqual(both.map((a) => a.name).sort());
});

// Each test builds its own tenants, so the rows run side by side (vitest's maxConcurrency, 5): on PostgreSQL the file
// waits on the database more than it works.
describe.concurrent.each(ROWS.map((row) => [row.action.name, row] as const))('%s', (_name, row) => {
  test('needs the same scope on both fronts', async () => {
    const { token: owner } = await buildTenant(t, SCOPES);
    const ids = (await row.setup?.(owner)) ?? {};
    const { token } = await buildTenant(
      t,
      SCOPES.filter((s) => s !== row.action.scope),
    );
    if (IMPLICIT_SCOPES.includes(row.action.scope as never)) {
      // Every token holds it, though not granted: neither front refuses, and both answer alike.
      const [r, g] = await Promise.all([rest(token, row.call(ids).rest), gql(token, row.call(ids).gql)]);
      expect(r.body.error?.code ?? null, r.text).not.toBe('missing_scope');
      expect(firstError(g).code ?? null, g.text).toBe(r.body.error?.code ?? null);
      return;
    }
    const { r, g } = await sameError(token, { ...row.call(ids), gqlParam: undefined }, 'missing_scope');
    expect(r.status).toBe(403);
    expect(g.body.errors[0].message).toBe(r.body.error.message);
  });

  test('answers bad input and unknown ids with the same code and parameter', async () => {
    const { token } = await buildTenant(t, SCOPES);
    const ids = (await row.setup?.(token)) ?? {};
    if (row.bad) await sameError(token, row.bad(ids), 'invalid_request');
    if (row.unknown) await sameError(token, row.unknown, 'resource_missing');
  });

  test('returns the same value', async () => {
    const { token } = await buildTenant(t, SCOPES);
    const viaRest = row.call((await row.setup?.(token)) ?? {});
    const viaGql = row.call((await row.setup?.(token)) ?? {});
    const [r, g] = await Promise.all([rest(token, viaRest.rest), gql(token, viaGql.gql)]);
    if (row.refused) {
      expect(r.body.error?.code, r.text).toBe(row.refused);
      expect(firstError(g).code, g.text).toBe(row.refused);
      return;
    }
    expect(g.body.errors, g.text).toBeUndefined();
    expect(r.status, r.text).toBe({ ok: 200, created: 201, accepted: 202 }[row.action.outcome]);
    const restValue = viaRest.rest.envelope ? r.body[viaRest.rest.envelope] : r.body;
    const gqlValue = viaGql.gql.pick ? viaGql.gql.pick(g.body.data) : Object.values(g.body.data)[0];
    const restCamel = camel(restValue) as any;
    // GraphQL selects every field of the type; a nullable field REST omits (secret) is null there.
    const gqlTrimmed = JSON.parse(JSON.stringify(gqlValue, (k, v) => (k === 'secret' && v === null ? undefined : v)));
    const volatile = new Set([...VOLATILE, ...(row.volatile ?? [])]);
    expect(shape(gqlTrimmed, volatile)).toEqual(shape(restCamel, volatile));
  });
});
