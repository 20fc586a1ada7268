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
import { expect } from 'vitest';
import { newId } from '../../src/domain/id.ts';
import { emitEvent, type HttpResponse, type TestApp, type TestOrg } from '../support/kit.ts';
import { createEndpoint, listDeliveries, settle, webhookConfig } from '../webhook/receiver.ts';
import { loadConfig } from '../../src/config.ts';
import { insertLedgerEntry, insertPayoutRow } from '../support/db-access.ts';
import { REST_BINDINGS } from '../../rest/platform/bindings.ts';
import { TOOLS } from '../../src/mcp/tools.ts';

/**
 * The id matrix the cross-tenant and cross-brand tests share: one object of
 * every kind (`seedObjects`), every REST route (from the OpenAPI documents)
 * and GraphQL field (from the schema) that takes an id, sent as a caller who
 * must not see those objects, and the owner's view of them (`ownerState`), so
 * a new route or field that takes an id is tried without editing the tests (a
 * new body shape needs one line in BODIES, and the test says so). The MCP
 * tools (from the registry, `mcpProbes`) are tried with the same ids and
 * bodies as their REST routes.
 */
/**
 * The matrix's server: rate limits (and the per-organization create limit) must not answer for the lookup, far above
 * the matrix's needs; operations run only when the test drains them (a background worker could still hold the launch
 * after a drain).
 */
export const MATRIX_CONFIG = {
  ...webhookConfig({ allowLoopback: true }),
  operations: { ...loadConfig({}).operations, worker: false },
  rateLimitBurst: 100_000,
  createRateLimit: 100_000,
};

export type Kind =
  | 'endpoint'
  | 'destination'
  | 'delivery'
  | 'event'
  | 'entity'
  | 'assertion'
  | 'program'
  | 'requirement'
  | 'enrollment'
  | 'distribution'
  | 'operation'
  | 'run'
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
export type Ids = Record<Kind, string>;

/** The object a collection's path segment names. */
const SEGMENT_KIND: Record<string, Kind> = {
  webhook_endpoints: 'endpoint',
  event_destinations: 'destination',
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
  runs: 'run',
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

/** Bodies of the routes in the matrix that take one; `ids` are the owner's or missing ones. */
const BODIES: Record<string, (ids: Ids) => unknown> = {
  updateWebhookEndpoint: () => ({ description: 'changed by an outsider' }),
  updateEventDestination: () => ({ description: 'changed by an outsider' }),
  retryEventDestinationDelivery: () => ({}),
  replayEventDestination: () => ({ starting_after: 0 }),
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
  reverseLedgerEntry: () => ({ reason: 'by an outsider' }),
};

/** One of every kind, made through the real routes with `token` (all scopes) in `org`'s default brand. */
export async function seedObjects(t: TestApp, org: TestOrg, token: string, tokenId: string, receiverUrl: string): Promise<Ids> {
  const post = async (path: string, body: unknown, status: number) => {
    const res = await t.http.post(path, body, { token, headers: { 'idempotency-key': randomUUID() } });
    expect(res.status, `${path}: ${res.text}`).toBe(status);
    return res.body;
  };
  const brand = org.brands[0]!.id;
  const endpoint = await createEndpoint(t, token, { url: receiverUrl });
  // A destination on a loopback broker nobody runs: it subscribes to nothing the seed emits, so it never publishes.
  const destination = (
    await post(
      '/v1/platform/event_destinations',
      { type: 'redis', url: 'redis://127.0.0.1:9', stream: 'events', enabled_events: ['payout.created'] },
      201,
    )
  ).event_destination;
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
  const run = await post('/v1/platform/payouts/runs', { program: program.id, period_end: '2026-01-01T00:00:00Z' }, 202);
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
  // A payout of ours, written directly (runs are proven in test/payout/).
  const payout = newId('payout');
  await insertPayoutRow(t, {
    id: payout,
    organizationId: org.id,
    brandId: brand,
    runId: newId('payoutRun'),
    operationId: launched.operation.id,
    entityId: assertion.entity,
    amount: 5n,
    periodEnd: new Date('2026-01-01T00:00:00Z'),
  });
  // A ledger entry of ours, written directly (accrual is proven in test/payout/).
  const entry = newId('ledgerEntry');
  await insertLedgerEntry(t, {
    id: entry,
    organizationId: org.id,
    brandId: brand,
    programId: program.id,
    enrollmentId: enrollment.id,
    entityId: assertion.entity,
    periodStart: new Date('2026-01-01T00:00:00Z'),
    periodEnd: new Date('2026-01-02T00:00:00Z'),
    value: 10,
    rateBps: 1000,
    earned: 1,
    carry: 0,
    amount: 1,
  });
  return {
    endpoint: endpoint.id,
    destination: destination.id,
    delivery: delivery!.id,
    event,
    entity: assertion.entity,
    assertion: assertion.id,
    program: program.id,
    requirement: requirement.id,
    enrollment: enrollment.id,
    distribution: launched.distribution.id,
    operation: launched.operation.id,
    run: run.operation.id,
    deployment: deployments.body.data[0].id,
    unit: unit.unit.id,
    token: tokenId,
    brand,
    relationship: relationship.id,
    tier: tier.tier.id,
    payout,
    entry,
    connection: connection.id,
    issuer: issuer.id,
  };
}

/** An id with `id`'s prefix and shape that names nothing. */
function missingLike(id: string): string {
  const cut = id.lastIndexOf('_') + 1;
  const rest = [...id.slice(cut)].map((c) => (/[0-9]/.test(c) ? String(randomInt(10)) : /[a-f]/.test(c) ? 'abcdef'[randomInt(6)] : c));
  return id.slice(0, cut) + rest.join('');
}

/** `ids` with those of `kinds` (every kind when omitted) replaced by missing ones. */
export function missingIds(ids: Ids, kinds?: ReadonlySet<Kind>): Ids {
  return Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, !kinds || kinds.has(k as Kind) ? missingLike(v) : v])) as Ids;
}

/** Status and body with the ids of the request and every request_id blanked, to compare two answers. */
export function answer(res: HttpResponse, ids: Ids) {
  let text = res.text;
  for (const id of Object.values(ids)) text = text.split(id).join('<id>');
  text = text.replace(/"request_id":"[^"]*"/g, '"request_id":"<rid>"');
  return { status: res.status, body: text };
}

/** Who sends the probes: a secret key (Surface B), a user token (Surface A), and headers such as `Service-Brand`. */
export interface Outsider {
  token: string;
  userToken: string;
  headers?: Record<string, string>;
}

export interface Probe {
  name: string;
  /** The kinds of object the probe names. */
  kinds: Kind[];
  send: (ids: Ids) => Promise<HttpResponse>;
}

export async function openApiProbes(t: TestApp, as: Outsider): Promise<Probe[]> {
  const probes: Probe[] = [];
  for (const docPath of ['/v1/platform/openapi.json', '/api/openapi.json', '/openapi.json']) {
    const doc = (await t.http.get(docPath)).body;
    const base = new URL(doc.servers[0].url).pathname.replace(/\/$/, '');
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(methods)) {
        const auth = op.security?.[0] ? Object.keys(op.security[0])[0] : undefined;
        if (auth !== 'platformToken' && auth !== 'userToken') continue; // the operator acts across organizations by design
        const token = auth === 'userToken' ? as.userToken : as.token;
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
        const bodyKinds = bodyFields.flatMap((f) => (FIELD_KIND[f] ? [FIELD_KIND[f]] : []));
        const takesId = pathKinds.length > 0 || queryKinds.length > 0 || bodyKinds.length > 0;
        if (!takesId) continue;
        for (const [param, kind] of pathKinds) expect(kind, `${method} ${path}: which object is ${param}?`).toBeDefined();
        const body = op.requestBody ? BODIES[op.operationId] : undefined;
        if (op.requestBody) expect(body, `${op.operationId} takes a body: add it to BODIES`).toBeDefined();
        const send = (ids: Ids) => {
          let url = base + path;
          for (const [param, kind] of pathKinds) url = url.replace(param, ids[kind!]);
          if (queryKinds.length) url += `?${new URLSearchParams(queryKinds.map(([name, kind]) => [name, ids[kind!]]))}`;
          const headers = { ...as.headers, 'idempotency-key': randomUUID() };
          return t.http.request(method.toUpperCase(), url, body?.(ids), { token, headers });
        };
        // Each query filter or cursor on its own list route is a probe of its own.
        probes.push({
          name: `${method.toUpperCase()} ${base}${path}${queryKinds.length ? ` ?${queryKinds.map((q) => q[0]).join('&')}` : ''}`,
          kinds: [...pathKinds.map(([, k]) => k!), ...queryKinds.map(([, k]) => k!), ...bodyKinds],
          send,
        });
      }
    }
  }
  return probes;
}

/**
 * One probe per MCP tool that takes an id (its action's path ids, and its input fields that name an object), sent as
 * `tools/call` in one session of the caller's key: the same ids and bodies as its REST route (REST_BINDINGS gives the
 * route), so a tool is in the matrix once its route is. Each change carries its own idempotency key, and an answer
 * is compared with its key and request ids blanked (the tool's text carries them escaped).
 */
export async function mcpProbes(t: TestApp, as: Outsider): Promise<Probe[]> {
  const headers = { ...as.headers, accept: 'application/json, text/event-stream' };
  const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'matrix', version: '1' } };
  const opened = await t.http.post('/mcp', { jsonrpc: '2.0', id: 0, method: 'initialize', params: init }, { token: as.token, headers });
  expect(opened.status, opened.text).toBe(200);
  const session = { ...headers, 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': init.protocolVersion };
  const probes: Probe[] = [];
  for (const tool of TOOLS) {
    const binding = REST_BINDINGS[tool.action.name];
    const segments = binding?.path.split('/') ?? [];
    if (!binding || segments[1] === 'event_types') continue; // the catalogue is global, as on REST
    const pathKinds = tool.action.params.map((p) => [p, SEGMENT_KIND[segments[segments.indexOf(`:${p}`) - 1]!]] as const);
    for (const [p, kind] of pathKinds) expect(kind, `${tool.name}: which object is ${p}?`).toBeDefined();
    const fields = Object.keys((tool.inputSchema.properties ?? {}) as object).filter((f) => !tool.action.params.includes(f));
    const listKind = SEGMENT_KIND[segments.at(-1)!];
    const fieldKinds = fields.flatMap((f) =>
      FIELD_KIND[f]
        ? [[f, FIELD_KIND[f]] as const]
        : f === 'starting_after' && listKind && listKind !== 'event'
          ? [[f, listKind] as const]
          : [],
    );
    if (!pathKinds.length && !fieldKinds.length) continue;
    const body = BODIES[binding.operationId];
    const send = async (ids: Ids): Promise<HttpResponse> => {
      const key = randomUUID();
      const args: Record<string, unknown> = {
        ...Object.fromEntries(fieldKinds.map(([f, kind]) => [f, ids[kind]])),
        ...(body?.(ids) as object | undefined),
        ...Object.fromEntries(pathKinds.map(([p, kind]) => [p, ids[kind!]])),
        ...(tool.mutation ? { idempotency_key: key } : {}),
      };
      const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool.name, arguments: args } };
      const res = await t.http.post('/mcp', call, { token: as.token, headers: session });
      return {
        ...res,
        text: res.text
          .split(key)
          .join('<key>')
          .replace(/req_[A-Za-z0-9]+/g, '<rid>'),
      };
    };
    probes.push({ name: `mcp ${tool.name}`, kinds: [...pathKinds.map(([, k]) => k!), ...fieldKinds.map(([, k]) => k)], send });
  }
  return probes;
}

const schema = buildSchema(readFileSync(resolve(import.meta.dirname, '../../schema.graphql'), 'utf8'));

/** GraphQL arguments that take an object id, and which object. */
function argKind(field: GraphQLField<unknown, unknown>, arg: GraphQLArgument): Kind | undefined {
  const byName: Record<string, Kind> = {
    endpointId: 'endpoint',
    destinationId: 'destination',
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
    ['eventdestination', 'destination'],
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
    ['payoutrun', 'run'],
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

export function graphqlProbes(t: TestApp, as: Outsider): Probe[] {
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
        return t.http.graphql(query, variables, { token: as.token, headers: as.headers });
      };
      probes.push({ name: `graphql ${keyword} ${field.name}`, kinds: kinds.flatMap(([, k]) => (k ? [k] : [])), send });
    }
  }
  return probes;
}

/** Lists of Surface B, as any brand sees them. */
const LISTS = [
  '/v1/platform/webhook_endpoints',
  '/v1/platform/event_destinations',
  '/v1/platform/events',
  '/v1/platform/programs',
  '/v1/platform/enrollments',
  '/v1/platform/operations',
  '/v1/platform/distributions',
  '/v1/platform/deployments',
  '/v1/platform/relationships',
  '/v1/platform/entities',
  '/v1/platform/payouts',
  '/v1/platform/payouts/ledger',
  '/v1/platform/connections',
  '/v1/platform/connect_config',
  '/v1/platform/handoff/issuers',
];

/**
 * The owner's view of every seeded object and every list, through its own credentials (`headers` select a brand);
 * `listsOnly` for a brand that must see none of the objects (its lists must not change either).
 */
export async function ownerState(
  t: TestApp,
  owner: { token: string; userToken: string; headers?: Record<string, string> },
  ids: Ids,
  listsOnly = false,
): Promise<unknown> {
  const objects = [
    `/v1/platform/webhook_endpoints/${ids.endpoint}`,
    `/v1/platform/webhook_endpoints/${ids.endpoint}/deliveries`,
    `/v1/platform/event_destinations/${ids.destination}`,
    `/v1/platform/event_destinations/${ids.destination}/deliveries`,
    `/v1/platform/assertions/${ids.assertion}`,
    `/v1/platform/assertions?entity=${ids.entity}&include_expired=true`,
    `/v1/platform/programs/${ids.program}`,
    `/v1/platform/programs/${ids.program}/requirements`,
    `/v1/platform/programs/${ids.program}/tiers`,
    `/v1/platform/enrollments/${ids.enrollment}`,
    `/v1/platform/operations/${ids.operation}`,
    `/v1/platform/operations/${ids.run}`,
    `/v1/platform/distributions/${ids.distribution}`,
    `/v1/platform/deployments/${ids.deployment}`,
    `/v1/platform/relationships/${ids.relationship}`,
    `/v1/platform/entities/${ids.entity}`,
    `/v1/platform/brands/${ids.brand}`,
    `/v1/platform/payouts/${ids.payout}`,
    `/v1/platform/connections/${ids.connection}`,
    `/v1/platform/handoff/issuers/${ids.issuer}`,
  ];
  await t.app.sequencer.flush();
  const out: Record<string, unknown> = {};
  for (const p of [...(listsOnly ? [] : objects), ...LISTS]) {
    const res = await t.http.get(p, { token: owner.token, headers: owner.headers });
    expect(res.status, `${p}: ${res.text}`).toBe(200);
    out[p] = res.body;
  }
  out.tokens = (await t.http.get('/platform/tokens', { token: owner.userToken })).body;
  out.units = (await t.http.post('/api/units/list', {}, { token: owner.token })).body;
  return out;
}

/** Sends every probe on `ids` and on missing ones (`vary`: which kinds go missing); the probes whose answers differ. */
async function leaksOf(probes: Probe[], ids: Ids, vary?: ReadonlySet<Kind>): Promise<string[]> {
  const leaks: string[] = [];
  for (const probe of probes) {
    const missing = missingIds(ids, vary);
    const onOurs = answer(await probe.send(ids), ids);
    const onMissing = answer(await probe.send(missing), missing);
    expect(onOurs.status, `${probe.name}: ${onOurs.body}`).toBeLessThan(500);
    expect(onMissing.status, `${probe.name}: ${onMissing.body}`).not.toBe(429);
    if (JSON.stringify(onOurs) !== JSON.stringify(onMissing))
      leaks.push(`${probe.name}\n  ours:    ${onOurs.status} ${onOurs.body}\n  missing: ${onMissing.status} ${onMissing.body}`);
  }
  return leaks;
}

/** Waits until nothing the set-up or the probes started is still running: operations, events, deliveries. */
async function quiesce(t: TestApp): Promise<void> {
  await t.app.operations.drain();
  await t.app.sequencer.flush();
  await settle(t);
}

/** The matrix is whole: it holds a probe for each of `routes` (a part of a probe's name) and more than 50 in all. */
export function expectCovers(probes: Probe[], routes: string[]): void {
  const names = probes.map((p) => p.name).join('\n');
  for (const r of routes) expect(names).toContain(r);
  expect(probes.length).toBeGreaterThan(50);
}

/**
 * Every probe on the owner's `ids` answers as on missing ones (`vary`: which kinds go missing), and so does each of
 * `more` (further checks, each answering its leaks); the owner's `state` is the same before and after.
 */
export async function expectConfined(
  t: TestApp,
  probes: Probe[],
  ids: Ids,
  state: () => Promise<unknown>,
  opts: { vary?: ReadonlySet<Kind>; more?: () => Promise<string[]> } = {},
): Promise<void> {
  // Quiesce first: deliveries of the set-up's later events (the launch's operation events) settle in the background.
  await quiesce(t);
  const before = await state();
  const leaks = [...(await leaksOf(probes, ids, opts.vary)), ...((await opts.more?.()) ?? [])];
  expect(leaks, leaks.join('\n')).toEqual([]);
  await quiesce(t);
  expect(await state()).toEqual(before);
}
