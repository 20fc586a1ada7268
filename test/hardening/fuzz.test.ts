import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
} from 'graphql';
import { connect, type Socket } from 'node:net';
import { describe, expect } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { ALL_SCOPES } from '../../src/domain/scope/catalogue.ts';
import { WAIT_TOOL } from '../../src/mcp/operation-wait.ts';
import { TOOLS } from '../../src/mcp/tools.ts';
import { appTest, buildOrg, buildToken, rawRequest, type RawResponse, type TestApp, WIDE_OPEN_LIMITS } from '../support/kit.ts';
import { EVENTS_SUBSCRIPTION, waitUntil } from '../support/stream-client.ts';
import { resolveRef } from '../support/openapi-ref.ts';

/**
 * Fuzz: malformed requests generated from the OpenAPI documents and the
 * GraphQL schema, sent with real credentials so they reach the handlers.
 * Properties of every answer: no 5xx; an error is in its surface's envelope
 * with the response's request id; no stack trace, secret or database error
 * text in an error body.
 *
 * FUZZ_RUNS (default 3000 requests, split REST/GraphQL; MCP adds a tenth)
 * and FUZZ_SEED (printed each run) reproduce or widen a run, e.g.
 * FUZZ_RUNS=20000.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);
/** About 15 s alone on a 2-core machine; the bound is for a loaded one (and for FUZZ_RUNS runs, scaled). */
const TIMEOUT_MS = Math.max(240_000, RUNS * 80);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const REST_RUNS = Math.round(RUNS * 0.7);
const GRAPHQL_RUNS = RUNS - REST_RUNS;
const MCP_RUNS = Math.max(300, Math.round(RUNS * 0.1));

// Buckets wide open: the fuzzer is after what the handlers answer, not 429s.
const wide = 1_000_000;
const test = appTest({
  config: {
    ...WIDE_OPEN_LIMITS,
    authFailureRateLimit: { perSecond: wide, burst: wide },
    // Small shares, so the connection churn below crosses them; 127.0.0.1 (this file's own requests) is a trusted
    // proxy, exempt from any share, so the churn's addresses are the only ones with one.
    http: { ...loadConfig({}).http, maxConnectionsPerAddress: 6, maxStreamsPerAddress: 4 },
    clientAddress: { trustedProxies: ['127.0.0.1'], ipv6PrefixLength: 64 },
  },
});
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let credentials: Record<'platform' | 'user' | 'operator', string>;
let brandSlugs: string[];
/** Real ids of this tenant (and a few of another), so path parameters hit rows as well as misses. */
let ids: string[];
/** MCP sessions of the platform key: one open, one ended (what an expired one answers too). */
let mcpSessions: { live: string; ended: string };

test.beforeAll(async ({ app }) => {
  t = app;
  const org = await buildOrg(t);
  const { secret } = await buildToken(t, org, [...ALL_SCOPES]);
  credentials = { platform: secret, user: org.userToken, operator: t.operatorToken };
  brandSlugs = org.brands.map((b) => b.slug);
  const auth = { token: secret };
  const endpoint = await t.http.post('/v1/platform/webhook_endpoints', { url: 'https://example.com/hook' }, auth);
  const program = await t.http.post('/v1/platform/programs', { name: 'Fuzz' }, auth);
  const assertion = await t.http.post('/v1/platform/assertions', { external_user_id: 'u1', issuer: 'site', key: 'k' }, auth);
  const distribution = await t.http.post(
    '/v1/platform/distributions',
    { name: 'Fuzz', budget: 0, deployments: [{ provider: 'sandbox' }] },
    auth,
  );
  const unit = await t.http.post('/api/units/create', { type: 'video', caption: 'c' }, auth);
  ids = [
    endpoint.body.webhook_endpoint?.id,
    program.body.program?.id ?? program.body.id,
    assertion.body.id ?? assertion.body.assertion?.id,
    distribution.body.id ?? distribution.body.operation?.id,
    unit.body.unit?.id,
    org.brands[0]!.id,
    org.id,
  ].filter((id): id is string => typeof id === 'string');
  expect(ids.length, JSON.stringify({ endpoint: endpoint.body, program: program.body })).toBeGreaterThanOrEqual(4);
  const open = async () => {
    const init = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: MCP_CLIENT },
    };
    const res = await t.http.post('/mcp', init, { token: secret, headers: { accept: MCP_ACCEPT } });
    return res.headers.get('mcp-session-id')!;
  };
  mcpSessions = { live: await open(), ended: await open() };
  await t.http.request('DELETE', '/mcp', undefined, { token: secret, headers: { 'mcp-session-id': mcpSessions.ended } });
  console.log(`fuzz: seed ${SEED}, ${RUNS} requests (replay with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS})`);
});

// ---------------------------------------------------------------- values

const NASTY = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  'tail\ud83d',
  '🚀 ok',
  '',
  ' ',
  '%00',
  '../../etc/passwd',
  "' OR 1=1 --",
  '"; DROP TABLE events; --',
  '${7*7}',
  '<script>alert(1)</script>',
  'null',
  'true',
  '-1',
  '1e309',
  'NaN',
  '0x10',
  'evt_',
  `we_${'g'.repeat(32)}`,
  `we_${'0'.repeat(32)}`,
  `evt_${'f'.repeat(32)}`,
  '00000000-0000-0000-0000-000000000000',
  'x'.repeat(300),
  'y'.repeat(20_000),
];
const nasty = fc.constantFrom(...NASTY);
const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 3, arbitrary: nasty },
);
const number = fc.oneof(fc.integer(), fc.constantFrom(0, -1, 2 ** 31, 2 ** 53, -(2 ** 63), 1e308), fc.double());
const scalar = fc.oneof(text, number, fc.boolean(), fc.constant(null));
const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 4 }),
  ),
})).value;
/** Nested arrays/objects `depth` levels deep, as JSON text (JSON.stringify itself overflows on very deep values). */
const deepText = fc
  .integer({ min: 20, max: 50_000 })
  .map((d) => (d % 2 ? '['.repeat(d) + ']'.repeat(d) : `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`));

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
};

/** A plausible value for a JSON schema (the base that mutations then break). */
function valueFor(s: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!s || depth > 4) return json;
  if (s.enum?.length) return fc.oneof(fc.constantFrom(...s.enum), text);
  const alt = s.anyOf ?? s.oneOf;
  if (alt?.length) return fc.oneof(...alt.map((a) => valueFor(a, depth + 1)));
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string':
      return fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...ids, ...brandSlugs, 'https://example.com/hook', 'assertion.created', 'k') },
        { weight: 2, arbitrary: text },
      );
    case 'integer':
    case 'number':
      return number;
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(valueFor(s.items, depth + 1), { maxLength: 4 });
    case 'object': {
      const props = Object.entries(s.properties ?? {});
      if (!props.length) return fc.dictionary(text, json, { maxKeys: 3 });
      return fc.record(Object.fromEntries(props.map(([k, v]) => [k, valueFor(v, depth + 1)])), { requiredKeys: [] });
    }
    default:
      return json;
  }
}

// ---------------------------------------------------------------- REST requests

interface Operation {
  method: string;
  path: string;
  security: string;
  query: { name: string; schema: Schema }[];
  body?: Schema;
  /** The document's responses: status → its required headers. */
  responses: Map<string, string[]>;
}

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** The documented operation this request was made from, when its method and path template were kept. */
  documented?: Operation;
}

const SECURITY: Record<string, keyof typeof credentials> = { platformToken: 'platform', userToken: 'user', operatorToken: 'operator' };

function operationsOf(doc: any, prefix: string): Operation[] {
  const ops: Operation[] = [];
  const base = new URL(doc.servers[0].url).pathname.replace(/\/$/, '');
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const scheme = Object.keys(op.security?.[0] ?? {})[0] ?? 'none';
      ops.push({
        method: method.toUpperCase(),
        path: `${base || prefix}${path}`,
        security: scheme,
        query: (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => ({ name: p.name, schema: p.schema })),
        body: op.requestBody?.content?.['application/json']?.schema,
        responses: new Map(
          Object.entries<any>(op.responses).map(([status, r]) => [
            status,
            Object.entries<any>(resolveRef(doc, r).headers ?? {})
              .filter(([, h]) => resolveRef(doc, h).required)
              .map(([name]) => name.toLowerCase()),
          ]),
        ),
      });
    }
  }
  return ops;
}

/**
 * Percent-encoding that, unlike encodeURIComponent, also encodes unpaired
 * surrogates (as their WTF-8 bytes, %ED%A0%80): what a hostile client sends.
 */
function pct(s: string): string {
  let out = '';
  for (const ch of s) {
    if (/[A-Za-z0-9\-_.~]/.test(ch)) {
      out += ch;
      continue;
    }
    const cp = ch.codePointAt(0)!;
    const bytes =
      cp < 0x80
        ? [cp]
        : cp < 0x800
          ? [0xc0 | (cp >> 6), 0x80 | (cp & 63)]
          : cp < 0x10000
            ? [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)]
            : [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
    out += bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return out;
}

const pathParam = () =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...ids) },
    { weight: 2, arbitrary: fc.constantFrom(...ids).map((id) => id.replace(/^[a-z]+_/, (p) => (p === 'we_' ? 'evt_' : 'we_'))) },
    { weight: 2, arbitrary: text.map((s) => pct(s.slice(0, 200))) },
    { weight: 1, arbitrary: fc.constantFrom('..', '.', '%2e%2e', '%00', '%ff', '%', '%E0%A4%A', 'a%2Fb', `${'9'.repeat(400)}`) },
  );

function pathFor(op: Operation): fc.Arbitrary<{ path: string; exact: boolean }> {
  const names = [...op.path.matchAll(/\{([a-z_]+)\}/gi)].map((m) => m[1]!);
  const filled = fc
    .tuple(...names.map(() => pathParam()))
    .map((values) => names.reduce((p, n, i) => p.replace(`{${n}}`, values[i]!), op.path));
  const exact = fc.constant(undefined);
  const mutated = fc.constantFrom<(p: string) => string>(
    (p) => p.toUpperCase(),
    (p) => p.replace(/\/([a-z])/, (_m, c: string) => `/${c.toUpperCase()}`),
    (p) => `${p}/`,
    (p) => p.replace(/\/([^/]+)$/, '//$1'),
    (p) => p.replace(/\/([a-z])([^/]*)$/, (_m, c: string, r: string) => `/%${c.charCodeAt(0).toString(16)}${r}`),
    (p) => p.replace(/\/([^/]+)$/, '/x/../$1'),
  );
  return fc
    .tuple(filled, fc.oneof({ weight: 4, arbitrary: exact }, { weight: 1, arbitrary: mutated }))
    .map(([p, m]) => ({ path: m ? m(p) : p, exact: !m }));
}

function queryFor(op: Operation): fc.Arbitrary<string> {
  const names = [...op.query.map((q) => q.name), 'unknown_param', 'startingAfter', 'limit'];
  const pair = fc.tuple(fc.constantFrom(...names), fc.oneof(valueFor(op.query[0]?.schema), text, fc.constantFrom(...ids)));
  return fc.array(pair, { maxLength: 4 }).map((pairs) => {
    if (!pairs.length) return '';
    // Short enough for Node's 16 KiB request-line limit (a longer line is refused before the app).
    const value = (v: unknown) => pct((typeof v === 'string' ? v : (JSON.stringify(v) ?? '')).slice(0, 500));
    return `?${pairs.map(([k, v]) => `${pct(k.slice(0, 100))}=${value(v)}`).join('&')}`;
  });
}

/** The documented body, then broken: wrong types, bad text, unknown fields, depth, size, not JSON. */
function bodyFor(op: Operation): fc.Arbitrary<string | undefined> {
  const base = valueFor(op.body ?? { type: 'object' });
  const asObject = base.map((v) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}));
  const field = fc.constantFrom('extra', ...Object.keys(op.body?.properties ?? {}));
  return fc.oneof(
    { weight: 15, arbitrary: base.map((v) => JSON.stringify(v)) },
    { weight: 15, arbitrary: fc.tuple(asObject, field, json).map(([o, k, v]) => JSON.stringify({ ...o, [k]: v })) },
    { weight: 15, arbitrary: fc.tuple(asObject, field, nasty).map(([o, k, v]) => JSON.stringify({ ...o, [k]: v })) },
    { weight: 5, arbitrary: fc.tuple(asObject, text, json).map(([o, k, v]) => JSON.stringify({ ...o, [k]: v })) },
    {
      weight: 5,
      arbitrary: fc
        .tuple(asObject, field, deepText)
        .map(([o, k, d]) => `${JSON.stringify({ ...o, [k]: 0 }).slice(0, -1)},${JSON.stringify(k)}:${d}}`),
    },
    { weight: 5, arbitrary: fc.oneof(json, fc.array(json)).map((v) => JSON.stringify(v) ?? 'null') },
    {
      weight: 5,
      arbitrary: fc.constantFrom(
        '{',
        '{"a":',
        "{'a':1}",
        'undefined',
        '{"a":1}}',
        '\u0000',
        '\ufeff{}',
        '[]]',
        '{"__proto__":{"x":1}}',
        '{"constructor":{"prototype":{}}}',
      ),
    },
    { weight: 5, arbitrary: fc.constant(undefined) },
    // Over the body limit: 413, never buffered whole.
    { weight: 1, arbitrary: fc.constant(`{"a":"${'z'.repeat(1_100_000)}"}`) },
  );
}

const contentType = fc.constantFrom(
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/merge-patch+json',
  undefined,
);

/** Latin-1 header values (what HTTP can carry); Node refuses control characters before the app. */
const headerText = fc.oneof(
  fc.string({ maxLength: 40 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
  fc.constantFrom('café', 'ÿÿÿ', 'x'.repeat(300), ' ', 'k\tv'),
);

function credentialFor(security: string): fc.Arbitrary<string | undefined> {
  const own = credentials[SECURITY[security] ?? 'platform'];
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(`Bearer ${own}`) },
    { weight: 1, arbitrary: fc.constantFrom(...Object.values(credentials)).map((c) => `Bearer ${c}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        undefined,
        'Bearer',
        `Basic ${own}`,
        `Bearer ${own}x`,
        `bearer  ${own}`,
        `Bearer sk_platform_live_${'x'.repeat(36)}`,
        'Bearer sk_test_1',
        'Bearer pk_live_1',
      ),
    },
  );
}

function restRequest(ops: Operation[]): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...ops).chain((op) =>
    fc
      .record({
        method: fc.oneof(
          { weight: 9, arbitrary: fc.constant(op.method) },
          { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS') },
        ),
        path: pathFor(op),
        query: queryFor(op),
        body: op.body || op.method === 'POST' ? bodyFor(op) : fc.constant(undefined),
        contentType,
        authorization: credentialFor(op.security),
        idempotencyKey: fc.option(fc.oneof(fc.uuid(), headerText), { freq: 3 }),
        brand: fc.option(fc.oneof(fc.constantFrom(...brandSlugs, ...ids), headerText), { freq: 5 }),
        shout: fc.boolean(),
      })
      .map((r) => {
        const name = (h: string) => (r.shout ? h.toUpperCase() : h);
        const headers: Record<string, string> = {};
        if (r.authorization !== undefined) headers[name('authorization')] = r.authorization;
        if (r.body !== undefined && r.contentType) headers[name('content-type')] = r.contentType;
        if (r.idempotencyKey !== null) headers[name('idempotency-key')] = r.idempotencyKey;
        if (r.brand !== null) headers[name('service-brand')] = r.brand;
        // A value that is empty or holds a slash makes another path (route_not_found): not this operation's answer.
        const documented = r.method === op.method && r.path.exact && !/\/\/|\/$|\/%2F|%2F/i.test(r.path.path) ? op : undefined;
        return { method: r.method, path: r.path.path + r.query, headers, body: r.body, documented };
      }),
  );
}

// ---------------------------------------------------------------- GraphQL requests

const schema = buildSchema(readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8'));

function typeName(type: GraphQLInputType): string {
  return type.toString();
}

/** JSON text spliced into the variables as is (a value too deep for JSON.stringify). */
class RawJson {
  constructor(readonly text: string) {}
}

function variablesText(variables: Record<string, unknown>): string {
  const raw: string[] = [];
  const text = JSON.stringify(variables, (_k, v: unknown) => (v instanceof RawJson ? `\u0001raw${raw.push(v.text) - 1}\u0001` : v));
  return text.replace(/"\\u0001raw(\d+)\\u0001"/g, (_m, i: string) => raw[Number(i)]!);
}

/** A value of the right type, with nasty strings inside. */
function inputValue(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return inputValue(type.ofType, depth);
  if (depth > 4) return fc.constant(null);
  if (isListType(type)) return fc.array(inputValue(type.ofType, depth + 1), { maxLength: 3 });
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    return fc.record(Object.fromEntries(fields.map((f) => [f.name, inputValue(f.type, depth + 1)])), {
      requiredKeys: fields.filter((f) => isNonNullType(f.type)).map((f) => f.name),
    });
  }
  if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((v) => v.name));
  switch (type.name) {
    case 'Int':
      return fc.integer({ min: -1000, max: 1000 });
    case 'Float':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'Boolean':
      return fc.boolean();
    case 'JSON':
      return fc.oneof(
        json,
        deepText.map((d) => new RawJson(d)),
      );
    case 'ID':
      return fc.oneof(fc.constantFrom(...ids), text);
    default:
      return fc.oneof(fc.constantFrom(...ids, 'https://example.com/hook', '2030-01-01T00:00:00Z'), text);
  }
}

/** A value that is not of the variable's type: Int given a string, String given an object... */
function wrongValue(type: GraphQLInputType): fc.Arbitrary<unknown> {
  const named = getNamedType(type);
  const candidates: fc.Arbitrary<unknown>[] = [fc.constant({ not: 'this type' }), fc.constant([[1]])];
  if (isScalarType(named) && ['Int', 'Float'].includes(named.name)) candidates.push(fc.constantFrom('abc', 2147483648, 1.5, true, '1'));
  else if (isScalarType(named) && named.name === 'Boolean') candidates.push(fc.constantFrom('true', 1, 0));
  else if (isScalarType(named) && named.name !== 'JSON') candidates.push(fc.constantFrom(true, 42, 1.5));
  else if (isEnumType(named)) candidates.push(fc.constantFrom('NOT_A_VALUE', 'lowercase', 3));
  if (isNonNullType(type)) candidates.push(fc.constant(null));
  return fc.oneof(...candidates);
}

function selectionFor(field: GraphQLField<unknown, unknown>): string {
  const named = getNamedType(field.type);
  return isObjectType(named) || (!isScalarType(named) && !isEnumType(named)) ? '{ __typename }' : '';
}

function graphqlRequest(): fc.Arbitrary<FuzzRequest> {
  const roots = [schema.getQueryType()!, schema.getMutationType()!].flatMap((root) =>
    Object.values(root.getFields()).map((field) => ({ kind: root === schema.getQueryType() ? 'query' : 'mutation', field })),
  );
  return fc.constantFrom(...roots).chain(({ kind, field }) => {
    const args = field.args;
    const perArg = args.map((a) =>
      fc.oneof(
        { weight: 6, arbitrary: inputValue(a.type).map((v) => ({ v, omit: false })) },
        { weight: 1, arbitrary: wrongValue(a.type).map((v) => ({ v, omit: false })) },
        { weight: isNonNullType(a.type) ? 0 : 2, arbitrary: fc.constant({ v: undefined as unknown, omit: true }) },
      ),
    );
    return fc
      .record({
        values: fc.tuple(...perArg),
        literal: fc.option(fc.constantFrom('"a\\u0000b"', '"\\u{0}"', '"ok 🚀"', '"\\uD83D\\uDE80"', '123', 'null', '[1,2]', '{a:1}'), {
          freq: 6,
        }),
        transport: fc.constantFrom('post', 'post', 'post', 'get', 'badType', 'badVariables'),
        authorization: credentialFor('platformToken'),
        idempotencyKey: fc.option(fc.oneof(fc.uuid(), headerText), { freq: 3 }),
      })
      .map(({ values, literal, transport, authorization, idempotencyKey }) => {
        const used = args.map((a, i) => ({ a, ...values[i]! })).filter((x) => !x.omit);
        // An optional String argument may carry the literal instead of a variable.
        const literalArg =
          literal !== null
            ? used.find((x) => getNamedType(x.a.type).name === 'String' && !isNonNullType(x.a.type) && !isListType(x.a.type))
            : undefined;
        const vars = used.filter((x) => x !== literalArg);
        const defs = vars.map((x) => `$${x.a.name}: ${typeName(x.a.type)}`).join(', ');
        const callArgs = [
          ...vars.map((x) => `${x.a.name}: $${x.a.name}`),
          ...(literalArg ? [`${literalArg.a.name}: ${literal}`] : []),
        ].join(', ');
        const query = `${kind}${defs ? `(${defs})` : ''} { ${field.name}${callArgs ? `(${callArgs})` : ''} ${selectionFor(field)} }`;
        const variables = Object.fromEntries(vars.map((x) => [x.a.name, x.v]));
        const headers: Record<string, string> = {};
        if (authorization !== undefined) headers.authorization = authorization;
        if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
        const variablesJson = variablesText(variables);
        let request: FuzzRequest;
        const qs = new URLSearchParams({ query, variables: variablesJson }).toString();
        // Node itself refuses request lines over 16 KiB (431, before the app): long ones go as POST.
        if (transport === 'get' && qs.length < 8000) {
          request = { method: 'GET', path: `/graphql?${qs}`, headers: { ...headers, accept: 'application/json' } };
        } else {
          const body = `{"query":${JSON.stringify(query)},"variables":${transport === 'badVariables' ? '"[1]"' : variablesJson}}`;
          headers['content-type'] = transport === 'badType' ? 'text/plain' : 'application/json';
          request = { method: 'POST', path: '/graphql', headers, body };
        }
        return request;
      });
  });
}

// ---------------------------------------------------------------- MCP

const MCP_ACCEPT = 'application/json, text/event-stream';
const MCP_CLIENT = { name: 'fuzz', version: '1' };
const MCP_METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'logging/setLevel',
  'notifications/initialized',
  'notifications/cancelled',
  'prompts/list',
  'completion/complete',
];
const ARGUMENT_NAMES = ['id', 'limit', 'url', 'name', 'starting_after', 'idempotency_key', 'timeout_seconds', 'budget', 'entity', 'key'];

/** One JSON-RPC message, well-formed or not: tool calls of every tool (arguments of any type), other methods, anything. */
function mcpMessage(): fc.Arbitrary<unknown> {
  const id = fc.oneof(
    { weight: 8, arbitrary: fc.oneof(fc.integer(), fc.uuid()) },
    { weight: 1, arbitrary: fc.constantFrom(null, { not: 'an id' }, true) },
  );
  const args = fc.oneof(
    { weight: 4, arbitrary: fc.dictionary(fc.constantFrom(...ARGUMENT_NAMES), fc.oneof(fc.constantFrom(...ids), json), { maxKeys: 4 }) },
    { weight: 1, arbitrary: json },
  );
  const name = fc.constantFrom(...TOOLS.map((x) => x.name), WAIT_TOOL, 'no_such_tool', '');
  const call = fc
    .record({ jsonrpc: fc.constant('2.0'), id, method: fc.constant('tools/call'), params: fc.record({ name, arguments: args }) })
    .map((m) => {
      // A wait on a live operation would hold the run for its default 20 s: one second is enough to prove the answer.
      if (m.params.name === WAIT_TOOL && m.params.arguments && typeof m.params.arguments === 'object')
        Object.assign(m.params.arguments, { timeout_seconds: 1 });
      return m;
    });
  const other = fc.record(
    { jsonrpc: fc.oneof(fc.constant('2.0'), text), id, method: fc.oneof(fc.constantFrom(...MCP_METHODS), text), params: json },
    { requiredKeys: ['method'] },
  );
  const single = fc.oneof({ weight: 4, arbitrary: call }, { weight: 3, arbitrary: other }, { weight: 1, arbitrary: json });
  return fc.oneof({ weight: 6, arbitrary: single }, { weight: 1, arbitrary: fc.array(single, { maxLength: 5 }) });
}

/** Past the body limit (BODY_LIMIT_BYTES, 1 MiB by default): one tool call whose argument is too big. */
const OVERSIZED = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"events_list","arguments":{"x":"${'y'.repeat(1_100_000)}"}}}`;

/** `good` ten times in eleven, else one of `bad`. */
const usually = <T>(good: T, ...bad: T[]): fc.Arbitrary<T> =>
  fc.oneof({ weight: 10, arbitrary: fc.constant(good) }, { weight: 1, arbitrary: fc.constantFrom(...bad) });

function mcpRequest(): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      body: fc.oneof(
        { weight: 12, arbitrary: mcpMessage().map((m) => JSON.stringify(m) ?? 'null') },
        { weight: 1, arbitrary: fc.constantFrom('', '{', '[', 'null', '[]', '"text"', '{"jsonrpc":"2.0","id":1,"method":') },
        { weight: 1, arbitrary: deepText },
        { weight: 1, arbitrary: fc.constant(OVERSIZED) },
      ),
      // Mostly well-formed headers, so that most requests reach the protocol and the tools; each goes wrong now and then.
      method: usually('POST', 'GET', 'DELETE', 'PUT'),
      session: usually('live', 'ended', 'unknown', 'garbage', 'none'),
      version: usually<string | undefined>('2025-11-25', '2025-06-18', undefined, '1999-01-01', 'not-a-version', ''),
      accept: usually<string | undefined>(MCP_ACCEPT, 'application/json', 'text/event-stream', '*/*', undefined),
      contentType: usually<string | undefined>('application/json', 'text/plain', undefined),
      host: usually<string | null>(null, 'evil.example', 'localhost:1', ''),
      authorization: credentialFor('platformToken'),
    })
    .map(({ body, method, session, version, accept, contentType, host, authorization }) => {
      // The live session's own GET stream stays open (no answer to wait for), and DELETE would end it for the run.
      if (method !== 'POST' && session === 'live') session = 'unknown';
      const headers: Record<string, string> = {};
      const id = { ...mcpSessions, unknown: '0b6f7d1e-4c1a-4c55-9a57-000000000000', garbage: '../x', none: undefined }[session];
      if (id !== undefined) headers['mcp-session-id'] = id;
      if (version !== undefined) headers['mcp-protocol-version'] = version;
      if (accept !== undefined) headers.accept = accept;
      if (contentType !== undefined) headers['content-type'] = contentType;
      if (host !== null) headers.host = host;
      if (authorization !== undefined) headers.authorization = authorization;
      return { method, path: '/mcp', headers, body: method === 'POST' ? body : undefined };
    });
}

/**
 * One JSON-RPC message as the server may send it: a result or an error (with a code and message), or a notification.
 * An internal error is a 500 in disguise, except the SDK's own answer to an `initialize` whose params are not one's
 * (its handler is the SDK's, which answers -32603 for params that do not parse; every handler of ours answers -32602).
 */
function notJsonRpc(m: any, initializeIds: unknown[] = []): string | null {
  if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') return 'not a JSON-RPC message';
  if ('error' in m) {
    if (typeof m.error?.code !== 'number' || typeof m.error?.message !== 'string') return 'JSON-RPC error without code and message';
    if (m.error.code === -32603 && !initializeIds.includes(m.id)) return 'JSON-RPC internal error (a 500 in disguise)';
    return null;
  }
  return 'result' in m || typeof m.method === 'string' ? null : 'JSON-RPC message neither result, error nor notification';
}

/**
 * What is wrong with one answer of `/mcp`, or null: as docs/mcp.md promises, a refusal before the protocol (host,
 * key, body) is Surface B's envelope, one of the protocol (session, headers, message) a JSON-RPC error, and an answer
 * is JSON-RPC (a message, a batch, or a stream of them). No answer carries a secret; no error a trace or SQL.
 */
function mcpViolation(req: FuzzRequest, res: RawResponse): string | null {
  if (res.status >= 500) return `status ${res.status}`;
  let sent: unknown;
  try {
    sent = JSON.parse(req.body ?? '');
  } catch {}
  const initializeIds = (Array.isArray(sent) ? sent : [sent]).flatMap((m: any) => (m?.method === 'initialize' ? [m.id] : []));
  const requestId = res.headers['request-id'];
  if (typeof requestId !== 'string' || !requestId.startsWith('req_')) return 'no Request-Id header';
  if (SECRET.test(res.text)) return 'secret in body';
  if (/"isError":true|"error":/.test(res.text) || res.status >= 400) {
    if (STACK.test(res.text)) return 'stack trace in body';
    if (DATABASE.test(res.text)) return 'database error text in body';
  }
  if (String(res.headers['content-type']).includes('text/event-stream')) {
    for (const line of res.text.split('\n').filter((l) => l.startsWith('data: '))) {
      let message: unknown;
      try {
        message = JSON.parse(line.slice(6));
      } catch {
        return 'an SSE event that is not JSON';
      }
      const wrong = notJsonRpc(message, initializeIds);
      if (wrong) return `SSE: ${wrong}`;
    }
    return null;
  }
  if (res.text === '') return res.status === 202 || res.status === 200 ? null : `empty ${res.status}`;
  const body = res.body;
  if (res.status >= 400) {
    const e = body?.error;
    const surfaceB = typeof e?.code === 'string' && typeof e.message === 'string' && 'param' in e && e.request_id === requestId;
    if (surfaceB) return null;
    return notJsonRpc(body) ? 'a refusal neither in Surface B’s envelope nor a JSON-RPC error' : null;
  }
  for (const m of Array.isArray(body) ? body : [body]) {
    const wrong = notJsonRpc(m, initializeIds);
    if (wrong) return wrong;
  }
  return null;
}

// ---------------------------------------------------------------- properties

const STACK = /\n\s+at \S|\(\S+:\d+:\d+\)|node_modules|file:\/\/|\.ts:\d+|"stack"/i;
const SECRET = /sk_[a-z0-9]+_live_[A-Za-z0-9]{8,}|whsec_[A-Za-z0-9+/=]{8,}|ut_[A-Za-z0-9]{8,}|op_test_[0-9a-f]{8,}/;
const DATABASE =
  /syntax error at or near|violates [a-z ]*constraint|relation "|column "|invalid byte sequence|duplicate key value|SQLSTATE|Prisma|P20\d\d\b|pglite/i;

/** What is wrong with one answer, or null. */
function violation(req: FuzzRequest, res: RawResponse, graphql: boolean): string | null {
  if (res.status >= 500) return `status ${res.status}`;
  if (!graphql && res.status < 400) return contractViolation(req, res);
  const requestId = res.headers['request-id'];
  if (typeof requestId !== 'string' || !requestId.startsWith('req_')) return 'no Request-Id header';
  const body = res.body;
  if (graphql && (typeof body !== 'object' || body === null || !('data' in body || 'errors' in body)))
    return 'GraphQL answer without data or errors';
  const isError = res.status >= 400 || (graphql && Array.isArray(body?.errors));
  if (!isError || req.method === 'HEAD') return null;
  if (STACK.test(res.text)) return 'stack trace in body';
  if (SECRET.test(res.text)) return 'secret in body';
  if (DATABASE.test(res.text)) return 'database error text in body';
  if (graphql) {
    if (!Array.isArray(body?.errors) || !body.errors.length) return 'GraphQL error without errors[]';
    for (const e of body.errors) {
      if (typeof e.message !== 'string' || typeof e.extensions?.code !== 'string')
        return 'GraphQL error without message and extensions.code';
      if (e.extensions.request_id !== requestId) return 'GraphQL error without the request id';
      if (e.extensions.code === 'internal_error') return 'GraphQL internal_error (a 500 in disguise)';
    }
    return null;
  }
  const documented = contractViolation(req, res);
  if (documented) return documented;
  if (/^\/+v1(\/|$)/i.test(req.path)) {
    const e = body?.error;
    if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || !('param' in e) || e.request_id !== requestId)
      return 'not a Surface B error envelope';
  } else if (!body || typeof body.error !== 'string' || typeof body.message !== 'string' || body.request_id !== requestId) {
    return 'not a Surface A ErrorResponse';
  }
  return null;
}

/**
 * The OpenAPI documents say what the server does: an answer to a documented operation has a documented status and
 * carries every header the document marks required for it (RateLimit-*, Retry-After, Request-Id).
 */
function contractViolation(req: FuzzRequest, res: RawResponse): string | null {
  const op = req.documented;
  if (!op) return null;
  const required = op.responses.get(String(res.status));
  if (!required) return `status ${res.status} is not documented for ${op.method} ${op.path}`;
  const missing = required.filter((h) => res.headers[h] === undefined);
  return missing.length ? `${res.status} of ${op.method} ${op.path} without its documented ${missing.join(', ')}` : null;
}

function describeRequest(req: FuzzRequest): string {
  const body =
    req.body === undefined ? '' : ` ${req.body.length > 300 ? `${req.body.slice(0, 300)}…(${req.body.length} chars)` : req.body}`;
  return `${req.method} ${req.path.slice(0, 300)} ${JSON.stringify(req.headers)}${body}`;
}

async function fuzz(arb: fc.Arbitrary<FuzzRequest>, runs: number, surface: 'REST' | 'GraphQL' | 'MCP') {
  const found = new Map<string, string[]>();
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(arb, async (request) => {
      const res = await rawRequest(t.origin, request.method, request.path, request.headers, request.body);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const problem = surface === 'MCP' ? mcpViolation(request, res) : violation(request, res, surface === 'GraphQL');
      if (problem) {
        const seen = found.get(problem) ?? [];
        if (seen.length < 3) seen.push(`${describeRequest(request)}\n    → ${res.status} ${res.text.slice(0, 400)}`);
        found.set(problem, seen);
      }
    }),
    { seed: SEED, numRuns: runs, endOnFailure: true },
  );
  const tally = JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)));
  console.log(`fuzz ${surface}: statuses ${tally}`);
  const report = [...found].map(([problem, examples]) => `${problem} (seed ${SEED}):\n  ${examples.join('\n  ')}`);
  expect(report, report.join('\n\n')).toEqual([]);
}

describe('fuzz', () => {
  test(
    `REST: ${REST_RUNS} malformed requests from the OpenAPI documents: no 5xx, envelopes with request ids, no traces, secrets or SQL`,
    async () => {
      const docs = await Promise.all(['/api/openapi.json', '/v1/platform/openapi.json'].map((p) => t.http.get(p)));
      const ops = [...operationsOf(docs[0]!.body, '/api'), ...operationsOf(docs[1]!.body, '/v1/platform')];
      expect(ops.length).toBeGreaterThan(30);
      await fuzz(restRequest(ops), REST_RUNS, 'REST');
    },
    TIMEOUT_MS,
  );

  test(
    `GraphQL: ${GRAPHQL_RUNS} malformed operations from the schema: no 5xx, coded errors, no traces, secrets or SQL`,
    async () => {
      await fuzz(graphqlRequest(), GRAPHQL_RUNS, 'GraphQL');
    },
    TIMEOUT_MS,
  );

  test(
    `MCP: ${MCP_RUNS} malformed JSON-RPC requests to /mcp (bad JSON, wrong types, batches, oversized, unknown and ended sessions, wrong headers): no 5xx, refusals in their envelope, no secret`,
    async () => {
      await fuzz(mcpRequest(), MCP_RUNS, 'MCP');
    },
    TIMEOUT_MS,
  );

  test('connection churn across the per-address shares: every connection is answered or refused with 503, none hangs, and every count is released', async () => {
    const kinds = ['idle', 'plain', 'sse', 'upgrade', 'garbage', 'partial'] as const;
    const action = fc.record({ address: fc.constantFrom('127.0.0.2', '127.0.0.3', '127.0.0.4'), kind: fc.constantFrom(...kinds) });
    const sse = JSON.stringify({ query: EVENTS_SUBSCRIPTION });
    const requests: Record<(typeof kinds)[number], string> = {
      idle: '',
      plain: 'GET /v1/platform/events HTTP/1.1\r\nHost: x\r\n\r\n',
      sse: `POST /graphql HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${credentials.platform}\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${sse.length}\r\n\r\n${sse}`,
      upgrade:
        'GET /graphql HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n',
      garbage: 'HELLO THERE\r\n\r\n',
      partial: 'GET /api/scopes HTTP/1.1\r\nHost: x\r\n',
    };
    const expected: Record<(typeof kinds)[number], RegExp | null> = {
      idle: null,
      plain: /^HTTP\/1\.1 (401|503) /,
      sse: /^HTTP\/1\.1 (200|503) /,
      upgrade: /^HTTP\/1\.1 (101|503) /,
      garbage: /^HTTP\/1\.1 (400|503) /,
      partial: null,
    };
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 30 }), async (actions) => {
        const sockets: Socket[] = [];
        const problems: string[] = [];
        try {
          for (const { address, kind } of actions) {
            const socket = connect({ port: Number(new URL(t.origin).port), host: '127.0.0.1', localAddress: address });
            sockets.push(socket);
            let data = '';
            let closed = false;
            socket.on('data', (d) => (data += d));
            socket.on('error', () => {});
            socket.once('close', () => (closed = true));
            await new Promise((r) => socket.once('connect', r));
            if (requests[kind]) socket.write(requests[kind]);
            const pattern = expected[kind];
            if (!pattern) continue;
            await waitUntil(() => data.includes('\r\n\r\n') || closed, `an answer to ${kind} from ${address}`, 10_000);
            const head = data.slice(0, data.indexOf('\r\n\r\n'));
            if (!pattern.test(head)) problems.push(`${kind} from ${address}: ${JSON.stringify(head.slice(0, 200))}`);
            else if (head.startsWith('HTTP/1.1 503') && !/\r\nRetry-After: 1\r\n/i.test(head))
              problems.push(`${kind} from ${address}: 503 without Retry-After`);
          }
        } finally {
          for (const s of sockets) s.destroy();
        }
        expect(problems).toEqual([]);
        // Every socket's count is given back exactly once, whatever path it took (plain, undecided, upgraded, SSE, refused).
        await waitUntil(
          () => t.app.connections.streams === 0 && t.app.connections.addresses === 0,
          () => `the churn's connections released: ${JSON.stringify(t.app.connections)}`,
          10_000,
        );
      }),
      { seed: SEED, numRuns: 12, endOnFailure: true },
    );
  }, 120_000);
});
