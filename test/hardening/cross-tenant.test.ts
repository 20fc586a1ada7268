import { randomInt, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  buildSchema,
  getNamedType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
} from 'graphql';
import { afterAll, describe, expect } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { ALL_SCOPES } from '../../src/domain/scope/catalogue.ts';
import { newId } from '../../src/domain/id.ts';
import { appTest, buildOrg, buildToken, emitEvent, type TestApp, type TestOrg } from '../support/kit.ts';
import type { HttpResponse } from '../support/http.ts';
import { buildConnectBrand, connect, hsHandoff, join, status } from '../support/connect.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig, type Receiver } from '../delivery/receiver.ts';

/**
 * Another organization's credentials on our ids must learn nothing and change
 * nothing: every request answers exactly as the same request on a missing id
 * of the same prefix (status and body, ids and request_id aside), and our own
 * view of every object is the same before and after. The REST cases come from
 * the OpenAPI documents and the GraphQL cases from the schema, so a new route
 * or field that takes an id is tried without editing this file (a new body
 * shape needs one line in BODIES, and the test says so).
 */
type Kind =
  | 'endpoint'
  | 'delivery'
  | 'event'
  | 'entity'
  | 'assertion'
  | 'program'
  | 'requirement'
  | 'enrollment'
  | 'distribution'
  | 'operation'
  | 'deployment'
  | 'unit'
  | 'token'
  | 'brand'
  | 'relationship'
  | 'tier'
  | 'payout'
  | 'entry'
  | 'connection'
  | 'issuer';
type Ids = Record<Kind, string>;

/** The object a collection's path segment names. */
const SEGMENT_KIND: Record<string, Kind> = {
  webhook_endpoints: 'endpoint',
  events: 'event',
  deliveries: 'delivery',
  assertions: 'assertion',
  programs: 'program',
  requirements: 'requirement',
  enrollments: 'enrollment',
  distributions: 'distribution',
  operations: 'operation',
  deployments: 'deployment',
  units: 'unit',
  tokens: 'token',
  brands: 'brand',
  entities: 'entity',
  relationships: 'relationship',
  tiers: 'tier',
  payouts: 'payout',
  // POST /payouts/runs/{id}/cancel: a run is its payout.run operation.
  runs: 'operation',
  // POST /payouts/ledger/{id}/reverse, and the ledger's starting_after.
  ledger: 'entry',
  connections: 'connection',
  issuers: 'issuer',
};

/** The object a query parameter or body field names. */
const FIELD_KIND: Record<string, Kind> = {
  entity: 'entity',
  program: 'program',
  distribution: 'distribution',
  unit_id: 'unit',
  token_id: 'token',
  default_program: 'program',
  brand: 'brand',
};

/** Bodies of the routes in the matrix that take one; `ids` are ours or missing ones. */
const BODIES: Record<string, (ids: Ids) => unknown> = {
  updateWebhookEndpoint: () => ({ description: 'changed by another organization' }),
  retryWebhookDelivery: () => ({}),
  createProgramRequirement: () => ({ metric: 'assert:other', operator: 'exists' }),
  createAssertion: (ids) => ({ entity: ids.entity, key: 'verified', value: false }),
  revokeAssertion: (ids) => ({ entity: ids.entity, key: 'verified' }),
  createEnrollment: (ids) => ({ program: ids.program, entity: ids.entity }),
  deleteUnit: (ids) => ({ unit_id: ids.unit }),
  revokePlatformToken: (ids) => ({ token_id: ids.token }),
  rotatePlatformToken: (ids) => ({ token_id: ids.token }),
  createPlatformToken: (ids) => ({ name: 'publishable', kind: 'publishable', brand: ids.brand }),
  createRelationship: (ids) => ({ entity: ids.entity }),
  rotateHandoffIssuer: () => ({}),
  updateConnectConfig: (ids) => ({ default_program: ids.program }),
  createConnection: (ids) => ({ entity: ids.entity, provider: 'sandbox', account_id: 'acct-1' }),
  createProgramTier: () => ({ name: 'Other', metric: 'sales', threshold: 5, rate_bps: 1 }),
  updateProgramTier: () => ({ rate_bps: 2 }),
  replayWebhookEndpoint: () => ({ starting_after: 0 }),
  runPayouts: (ids) => ({ program: ids.program, period_end: '2026-01-01T00:00:00Z' }),
  reverseLedgerEntry: () => ({ reason: 'by another organization' }),
};

// Rate limits (and the per-organization create limit) must not answer for the lookup: far above this test's needs.
// Operations run only when the test drains them: a background worker could still hold the launch after a drain.
const test = appTest({
  config: {
    ...webhookConfig({ allowLoopback: true }),
    operations: { ...loadConfig({}).operations, worker: false },
    rateLimitBurst: 100_000,
    createRateLimit: 100_000,
  },
});
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let rx: Receiver;
let ours: { org: TestOrg; token: string; ids: Ids };
let other: { org: TestOrg; token: string };

test.beforeAll(async ({ app }) => {
  t = app;
  rx = await startReceiver();
  const org = await buildOrg(t);
  const { secret: token, id: tokenId } = await buildToken(t, org, [...ALL_SCOPES]);
  const otherOrg = await buildOrg(t);
  other = { org: otherOrg, token: (await buildToken(t, otherOrg, [...ALL_SCOPES])).secret };

  const post = async (path: string, body: unknown, status: number) => {
    const res = await t.http.post(path, body, { token, headers: { 'idempotency-key': randomUUID() } });
    expect(res.status, `${path}: ${res.text}`).toBe(status);
    return res.body;
  };
  const endpoint = await createEndpoint(t, token, { url: rx.url('/ours') });
  const event = await emitEvent(t, org.id);
  await settle(t);
  const [delivery] = await listDeliveries(t, token, endpoint.id);
  const assertion = await post(
    '/v1/platform/assertions',
    { external_user_id: 'u-1', issuer: 'https://idp.example', key: 'verified', value: true },
    201,
  );
  const program = await post('/v1/platform/programs', { name: 'Ours', grace_period_seconds: 0 }, 201);
  const requirement = await post(
    `/v1/platform/programs/${program.id}/requirements`,
    { metric: 'assert:verified', operator: 'exists' },
    201,
  );
  const enrollment = await post('/v1/platform/enrollments', { program: program.id, entity: assertion.entity }, 201);
  const launched = await post(
    '/v1/platform/distributions',
    { name: 'Ours', budget: 0, deployments: [{ provider: 'sandbox', config: {} }] },
    202,
  );
  await t.app.operations.drain();
  const deployments = await t.http.get(`/v1/platform/deployments?distribution=${launched.distribution.id}`, { token });
  const unit = await post('/api/units/create', { type: 'video', caption: 'Ours' }, 200);
  const relationship = await post('/v1/platform/relationships', { entity: assertion.entity }, 201);
  const connection = await post(
    '/v1/platform/connections',
    { entity: assertion.entity, provider: 'sandbox', account_id: 'acct-ours', grants: ['videos:publish'] },
    201,
  );
  const issuer = await post('/v1/platform/handoff/issuers', { name: 'Ours', algorithm: 'HS256' }, 201);
  const tier = await post(
    `/v1/platform/programs/${program.id}/tiers`,
    { name: 'Gold', metric: 'sales', threshold: 100, rate_bps: 250 },
    202,
  );
  // A payout of ours, written directly (runs are proven in test/payouts/).
  const payout = newId('payout');
  await t.app.deps.db.prisma.payout.create({
    data: {
      id: payout,
      organizationId: org.id,
      brandId: org.brands[0]!.id,
      runId: newId('payoutRun'),
      operationId: launched.operation.id,
      entityId: assertion.entity,
      amount: 5n,
      periodEnd: new Date('2026-01-01T00:00:00Z'),
    },
  });
  // A ledger entry of ours, written directly (accrual is proven in test/payouts/).
  const entry = newId('ledgerEntry');
  await t.app.deps.db.prisma.$executeRaw`
    INSERT INTO ledger_entry (id, organization_id, brand_id, program_id, enrollment_id, entity_id, kind, period_start, period_end,
      source_period_start, qualified, value, rate_bps, earned, carry, amount)
    VALUES (${entry}, ${org.id}, ${org.brands[0]!.id}, ${program.id}, ${enrollment.id}, ${assertion.entity}, 'accrual',
      '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-01T00:00:00Z', true, 10, 1000, 1, 0, 1)`;
  ours = {
    org,
    token,
    ids: {
      endpoint: endpoint.id,
      delivery: delivery!.id,
      event,
      entity: assertion.entity,
      assertion: assertion.id,
      program: program.id,
      requirement: requirement.id,
      enrollment: enrollment.id,
      distribution: launched.distribution.id,
      operation: launched.operation.id,
      deployment: deployments.body.data[0].id,
      unit: unit.unit.id,
      token: tokenId,
      brand: org.brands[0]!.id,
      relationship: relationship.id,
      tier: tier.tier.id,
      payout,
      entry,
      connection: connection.id,
      issuer: issuer.id,
    },
  };
});
afterAll(async () => {
  await rx?.close();
});

/** An id with our id's prefix and shape that names nothing. */
function missingLike(id: string): string {
  const cut = id.lastIndexOf('_') + 1;
  const rest = [...id.slice(cut)].map((c) => (/[0-9]/.test(c) ? String(randomInt(10)) : /[a-f]/.test(c) ? 'abcdef'[randomInt(6)] : c));
  return id.slice(0, cut) + rest.join('');
}

function missingIds(ids: Ids): Ids {
  return Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, missingLike(v)])) as Ids;
}

/** Status and body with the ids of the request and every request_id blanked, to compare two answers. */
function answer(res: HttpResponse, ids: Ids) {
  let text = res.text;
  for (const id of Object.values(ids)) text = text.split(id).join('<id>');
  text = text.replace(/"request_id":"[^"]*"/g, '"request_id":"<rid>"');
  return { status: res.status, body: text };
}

interface Probe {
  name: string;
  send: (ids: Ids) => Promise<HttpResponse>;
}

async function openApiProbes(): Promise<Probe[]> {
  const probes: Probe[] = [];
  for (const docPath of ['/v1/platform/openapi.json', '/api/openapi.json', '/openapi.json']) {
    const doc = (await t.http.get(docPath)).body;
    const base = new URL(doc.servers[0].url).pathname.replace(/\/$/, '');
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(methods)) {
        const auth = op.security?.[0] ? Object.keys(op.security[0])[0] : undefined;
        if (auth !== 'platformToken' && auth !== 'userToken') continue; // the operator acts across organizations by design
        const token = auth === 'userToken' ? other.org.userToken : other.token;
        const segments = path.split('/');
        if (segments[1] === 'event_types') continue; // the event-type catalogue is global: no object of an organization to probe
        const pathKinds = [...path.matchAll(/\{(\w+)\}/g)].map((m) => {
          const i = segments.indexOf(m[0]);
          return [m[0], SEGMENT_KIND[segments[i - 1]!]] as const;
        });
        const query = ((op.parameters ?? []) as any[]).filter((p) => p.in === 'query');
        const listKind = SEGMENT_KIND[segments.at(-1)!];
        const queryKinds = query.flatMap((p) =>
          FIELD_KIND[p.name]
            ? [[p.name, FIELD_KIND[p.name]] as const]
            : p.name === 'starting_after' && listKind && listKind !== 'event'
              ? [[p.name, listKind] as const]
              : [],
        );
        const bodyFields = Object.keys(op.requestBody?.content?.['application/json']?.schema?.properties ?? {});
        const takesId = pathKinds.length > 0 || queryKinds.length > 0 || bodyFields.some((f) => FIELD_KIND[f]);
        if (!takesId) continue;
        for (const [param, kind] of pathKinds) expect(kind, `${method} ${path}: which object is ${param}?`).toBeDefined();
        const body = op.requestBody ? BODIES[op.operationId] : undefined;
        if (op.requestBody) expect(body, `${op.operationId} takes a body: add it to BODIES`).toBeDefined();
        const send = (ids: Ids) => {
          let url = base + path;
          for (const [param, kind] of pathKinds) url = url.replace(param, ids[kind!]);
          if (queryKinds.length) url += `?${new URLSearchParams(queryKinds.map(([name, kind]) => [name, ids[kind!]]))}`;
          const headers = { 'idempotency-key': randomUUID() };
          return t.http.request(method.toUpperCase(), url, body?.(ids), { token, headers });
        };
        // Each query filter or cursor on its own list route is a probe of its own.
        probes.push({
          name: `${method.toUpperCase()} ${base}${path}${queryKinds.length ? ` ?${queryKinds.map((q) => q[0]).join('&')}` : ''}`,
          send,
        });
      }
    }
  }
  return probes;
}

const schema = buildSchema(readFileSync(resolve(import.meta.dirname, '../../schema.graphql'), 'utf8'));

/** GraphQL arguments that take an object id, and which object. */
function argKind(field: GraphQLField<unknown, unknown>, arg: GraphQLArgument): Kind | undefined {
  const byName: Record<string, Kind> = {
    endpointId: 'endpoint',
    program: 'program',
    unitId: 'unit',
    entity: 'entity',
    distribution: 'distribution',
    subjectId: 'distribution',
    defaultProgram: 'program',
  };
  if (byName[arg.name]) return byName[arg.name];
  if (arg.name !== 'id') return undefined;
  const nouns: [string, Kind][] = [
    ['delivery', 'delivery'],
    ['requirement', 'requirement'],
    ['webhookendpoint', 'endpoint'],
    ['enrollment', 'enrollment'],
    ['deployment', 'deployment'],
    ['distribution', 'distribution'],
    ['operation', 'operation'],
    ['assertion', 'assertion'],
    ['program', 'program'],
    ['unit', 'unit'],
    ['event', 'event'],
    ['relationship', 'relationship'],
    ['entity', 'entity'],
    ['brand', 'brand'],
    ['ledgerentry', 'entry'],
    ['payoutrun', 'operation'],
    ['payout', 'payout'],
    ['connection', 'connection'],
    ['handoffissuer', 'issuer'],
  ];
  return nouns.find(([noun]) => field.name.toLowerCase().includes(noun))?.[1];
}

function filler(type: GraphQLInputType): unknown {
  const named = getNamedType(type);
  if (isListType(isNonNullType(type) ? type.ofType : type)) return [];
  if ('getValues' in named) return named.getValues()[0]!.value;
  return { String: 'verified', Int: 1, Float: 1, Boolean: false, JSON: {}, ID: 'x' }[named.name] ?? {};
}

function selection(type: GraphQLOutputType): string {
  const named = getNamedType(type);
  if (!isObjectType(named)) return '';
  return named.getFields().edges ? '{ edges { __typename } }' : '{ __typename }';
}

function graphqlProbes(): Probe[] {
  const probes: Probe[] = [];
  for (const root of [schema.getQueryType()!, schema.getMutationType()!]) {
    const keyword = root === schema.getQueryType() ? 'query' : 'mutation';
    for (const field of Object.values(root.getFields())) {
      const kinds = field.args.map((a) => [a, argKind(field, a)] as const);
      if (!kinds.some(([, k]) => k)) continue;
      const send = (ids: Ids) => {
        const variables: Record<string, unknown> = {};
        for (const [arg, kind] of kinds) {
          if (kind) variables[arg.name] = ids[kind];
          else if (arg.name === 'idempotencyKey') variables[arg.name] = randomUUID();
          else if (isNonNullType(arg.type)) variables[arg.name] = filler(arg.type);
        }
        const used = field.args.filter((a) => a.name in variables);
        const decl = used.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
        const args = used.map((a) => `${a.name}: $${a.name}`).join(', ');
        const query = `${keyword} Probe(${decl}) { ${field.name}(${args}) ${selection(field.type)} }`;
        return t.http.graphql(query, variables, { token: other.token });
      };
      probes.push({ name: `graphql ${keyword} ${field.name}`, send });
    }
  }
  return probes;
}

/** Our view of every object and list, through our own credentials. */
async function ourState(): Promise<unknown> {
  const { token, ids, org } = ours;
  const paths = [
    `/v1/platform/webhook_endpoints/${ids.endpoint}`,
    `/v1/platform/webhook_endpoints/${ids.endpoint}/deliveries`,
    '/v1/platform/webhook_endpoints',
    '/v1/platform/events',
    `/v1/platform/assertions/${ids.assertion}`,
    `/v1/platform/assertions?entity=${ids.entity}&include_expired=true`,
    `/v1/platform/programs/${ids.program}`,
    `/v1/platform/programs/${ids.program}/requirements`,
    '/v1/platform/programs',
    `/v1/platform/enrollments/${ids.enrollment}`,
    '/v1/platform/enrollments',
    `/v1/platform/operations/${ids.operation}`,
    '/v1/platform/operations',
    `/v1/platform/distributions/${ids.distribution}`,
    '/v1/platform/distributions',
    `/v1/platform/deployments/${ids.deployment}`,
    `/v1/platform/relationships/${ids.relationship}`,
    '/v1/platform/relationships',
    `/v1/platform/entities/${ids.entity}`,
    '/v1/platform/entities',
    `/v1/platform/brands/${ids.brand}`,
    `/v1/platform/programs/${ids.program}/tiers`,
    `/v1/platform/payouts/${ids.payout}`,
    '/v1/platform/payouts',
    '/v1/platform/payouts/ledger',
    `/v1/platform/connections/${ids.connection}`,
    '/v1/platform/connections',
    '/v1/platform/connect_config',
    `/v1/platform/handoff/issuers/${ids.issuer}`,
    '/v1/platform/handoff/issuers',
  ];
  await t.app.sequencer.flush();
  const out: Record<string, unknown> = {};
  for (const p of paths) {
    const res = await t.http.get(p, { token });
    expect(res.status, `${p}: ${res.text}`).toBe(200);
    out[p] = res.body;
  }
  out.tokens = (await t.http.get('/platform/tokens', { token: org.userToken })).body;
  out.units = (await t.http.post('/api/units/list', {}, { token })).body;
  return out;
}

describe('cross-tenant matrix', () => {
  test('another organization on our ids answers exactly as on missing ids, REST and GraphQL, and changes nothing of ours', async () => {
    const probes = [...(await openApiProbes()), ...graphqlProbes()];
    // Every object route of the brief is in the matrix.
    const names = probes.map((p) => p.name).join('\n');
    for (const r of [
      'webhook_endpoints/{id}',
      'deliveries/{delivery_id}/retry',
      'assertions/{id}',
      'assertions/revoke',
      'operations/{id}',
      'distributions/{id}/cancel',
      'programs/{id}/requirements/{requirement}',
      'enrollments/{id}/approve',
      'deployments/{id}',
      'units/delete',
      'tokens/rotate',
      'graphql query event',
      'graphql mutation retryWebhookDelivery',
      'graphql mutation deleteUnit',
      'brands/{id}',
      'entities/{id}',
      'relationships/{id}/end',
      'graphql mutation endRelationship',
      'graphql query entity',
      'payouts/{id}',
      'payouts/runs/{id}/cancel',
      'graphql mutation runPayouts',
      'payouts/ledger/{id}/reverse',
      'graphql mutation reverseLedgerEntry',
      'connections/{id}/revoke',
      'graphql mutation revokeConnection',
      'handoff/issuers/{id}/rotate',
      'graphql mutation deleteHandoffIssuer',
      'platform/tokens/create',
    ]) {
      expect(names).toContain(r);
    }
    expect(probes.length).toBeGreaterThan(50);

    // Quiesce first: deliveries of our set-up's later events (the launch's operation events) settle in the background.
    await t.app.operations.drain();
    await t.app.sequencer.flush();
    await settle(t);
    const before = await ourState();
    const leaks: string[] = [];
    for (const probe of probes) {
      const missing = missingIds(ours.ids);
      const onOurs = answer(await probe.send(ours.ids), ours.ids);
      const onMissing = answer(await probe.send(missing), missing);
      expect(onOurs.status, `${probe.name}: ${onOurs.body}`).toBeLessThan(500);
      expect(onMissing.status, `${probe.name}: ${onMissing.body}`).not.toBe(429);
      if (JSON.stringify(onOurs) !== JSON.stringify(onMissing))
        leaks.push(`${probe.name}\n  ours:    ${onOurs.status} ${onOurs.body}\n  missing: ${onMissing.status} ${onMissing.body}`);
    }
    expect(leaks, leaks.join('\n')).toEqual([]);
    await t.app.operations.drain();
    await t.app.sequencer.flush();
    await settle(t);
    expect(await ourState()).toEqual(before);
  });

  test('partner connect: another organization’s publishable key on our connect session answers exactly as on a missing one, and changes nothing', async () => {
    const our = await buildConnectBrand(t);
    const their = await buildConnectBrand(t);
    const { session } = (await join(t, our.pk, await hsHandoff(t, our))).body;
    const missing = `cs_${'A'.repeat(36)}`;
    const blank = (res: HttpResponse) => ({ status: res.status, body: res.text.replace(/"request_id":"[^"]*"/g, '') });
    const before = (await status(t, our.pk, session)).body;
    for (const send of [
      (cs: string) => status(t, their.pk, cs),
      (cs: string) => connect(t, their.pk, cs, { provider: 'youtube', account_id: 'theirs' }),
    ]) {
      const onOurs = blank(await send(session));
      expect(onOurs.status).toBe(401);
      expect(onOurs).toEqual(blank(await send(missing)));
    }
    expect((await status(t, our.pk, session)).body).toEqual(before);
  });
});
