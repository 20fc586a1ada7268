import { beforeAll, describe, expect } from 'vitest';
import pino from 'pino';
import { acceptedJsonType, directJson } from '../../src/graphql/direct.ts';
import { createGraphQL } from '../../src/graphql/yoga.ts';
import { appTest, type TestApp, buildTenant } from '../support/kit.ts';

/**
 * A `GET /graphql` and a JSON `POST /graphql` are answered without the fetch
 * adapter (src/graphql/direct.ts). Every request below goes once through that
 * path and once through Yoga (GRAPHQL_DIRECT off), by POST and by GET (its
 * parameters in the query string): status, headers and body must be
 * identical, byte for byte, but for the request id.
 */
const test = appTest();
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

interface Case {
  what: string;
  body: unknown;
  token?: 'reader' | 'writer' | 'none' | 'invalid' | 'spent';
  headers?: Record<string, string>;
}

const STRICT = { accept: 'application/graphql-response+json' };
const FEED =
  'query Feed($first: Int) { events(first: $first) { edges { cursor node { id type seq data createdAt } } pageInfo { hasNextPage endCursor } } }';
const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `v${i}: viewer { scopes }`).join(' ')} }`;
const pages = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `e${i}: events(first: 100) { edges { cursor } }`).join(' ')} }`;
const CREATE = 'mutation { createWebhookEndpoint(url: "https://parity.example/in", idempotencyKey: "parity-1") { id url enabledEvents } }';

const cases: Case[] = [
  { what: 'a query', body: { query: '{ viewer { organization { slug } scopes } }' } },
  {
    what: 'a named operation among two, with variables',
    body: { query: `${FEED} query Other { viewer { scopes } }`, operationName: 'Feed', variables: { first: 5 } },
  },
  {
    what: 'null variables, operationName and extensions',
    body: { query: '{ viewer { scopes } }', variables: null, operationName: null, extensions: null },
  },
  { what: 'under application/graphql-response+json', body: { query: FEED, variables: { first: 2 } }, headers: STRICT },
  { what: 'Accept: */*', body: { query: FEED }, headers: { accept: '*/*' } },
  { what: 'a resolver error (first out of range)', body: { query: FEED, variables: { first: 0 } } },
  { what: 'a missing object', body: { query: '{ event(id: "evt_nope") { id } }' } },
  { what: 'a missing scope', body: { query: '{ viewer { scopes } webhookEndpoints { edges { cursor } } }' } },
  { what: 'a validation error', body: { query: '{ nope }' } },
  { what: 'a validation error, strict', body: { query: '{ nope }' }, headers: STRICT },
  { what: 'a parse error', body: { query: 'query {' }, headers: STRICT },
  { what: 'a variable that does not coerce', body: { query: FEED, variables: { first: 'abc' } } },
  { what: 'a variable that does not coerce, strict', body: { query: FEED, variables: { first: 'abc' } }, headers: STRICT },
  { what: 'a missing required variable', body: { query: 'query($id: ID!) { event(id: $id) { id } }' }, headers: STRICT },
  {
    what: 'a NUL in a variable',
    body: { query: 'query($s: String) { events(type: $s) { edges { cursor } } }', variables: { s: 'a\u0000b' } },
  },
  { what: 'an unknown operation name', body: { query: 'query A { viewer { scopes } }', operationName: 'B' } },
  { what: 'too many aliases', body: { query: aliases(21) } },
  { what: 'too many list items', body: { query: pages(20) } },
  { what: 'no token', body: { query: '{ viewer { scopes } }' }, token: 'none' },
  { what: 'an unknown token', body: { query: '{ viewer { scopes } }' }, token: 'invalid' },
  { what: 'a rate-limited token', body: { query: '{ viewer { scopes } }' }, token: 'spent' },
  { what: 'a mutation replayed by its idempotency key', body: { query: CREATE }, token: 'writer' },
  {
    what: 'the Idempotency-Key header on two mutations',
    body: { query: `mutation { a: deleteWebhookEndpoint(id: "we_x") { id } b: deleteWebhookEndpoint(id: "we_y") { id } }` },
    token: 'writer',
    headers: { 'idempotency-key': 'two' },
  },
  // Declined by the direct path, answered by Yoga either way:
  { what: 'bad JSON', body: '{"query": ' },
  { what: 'no query', body: { variables: {} } },
  { what: 'variables not an object', body: { query: '{ viewer { scopes } }', variables: 'x' } },
  { what: 'an unexpected parameter', body: { query: '{ viewer { scopes } }', nope: 1 } },
  { what: 'a batch', body: [{ query: '{ viewer { scopes } }' }] },
  {
    what: 'a subscription accepting only JSON',
    body: { query: 'subscription { events { id } }' },
    headers: { accept: 'application/json' },
  },
];

describe('the direct JSON path', () => {
  let tokens: Record<string, string | undefined>;
  beforeAll(async () => {
    const reader = await buildTenant(t, ['events:read']);
    const writer = await buildTenant(t, ['webhooks:write', 'webhooks:read']);
    const spent = await buildTenant(t, ['events:read']);
    // The manual clock never refills a bucket: spend this one (each page costs 20 of the 200-token burst).
    let status = 200;
    for (let i = 0; i < 20 && status !== 429; i++) status = (await t.http.graphql(pages(19), {}, { token: spent.token })).status;
    expect(status).toBe(429);
    // The replay case replays this first create.
    expect((await t.http.graphql(CREATE, {}, { token: writer.token })).body.errors).toBeUndefined();
    tokens = { reader: reader.token, writer: writer.token, spent: spent.token, none: undefined, invalid: 'sk_platform_live_nope' };
  });

  /** The case's parameters as a GET's query string (`variables` and `extensions` as JSON), or null for a body that has none. */
  const queryString = (body: unknown) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
    const out = new URLSearchParams();
    for (const [k, v] of Object.entries(body)) if (v != null) out.set(k, typeof v === 'string' ? v : JSON.stringify(v));
    return out.toString();
  };

  const send = async (c: Case, direct: boolean, method: 'GET' | 'POST') => {
    t.app.deps.config.graphqlDirect = direct;
    try {
      const token = tokens[c.token ?? 'reader'];
      const headers: Record<string, string> = { ...(method === 'POST' && { 'content-type': 'application/json' }), ...c.headers };
      if (token) headers.authorization = `Bearer ${token}`;
      const res =
        method === 'POST'
          ? await fetch(`${t.origin}/graphql`, { method, headers, body: typeof c.body === 'string' ? c.body : JSON.stringify(c.body) })
          : await fetch(`${t.origin}/graphql?${queryString(c.body)}`, { headers });
      const id = res.headers.get('request-id')!;
      const text = (await res.text()).replaceAll(id, 'REQ');
      // Each request spends from the token's bucket: what is left differs between the two sends, not whether it is told.
      const rest = [...res.headers]
        .filter(([k]) => k !== 'date' && k !== 'request-id')
        .map(([k, v]) => [k, k === 'ratelimit-remaining' || k === 'ratelimit-reset' ? 'N' : v]);
      return { status: res.status, headers: Object.fromEntries(rest), text };
    } finally {
      t.app.deps.config.graphqlDirect = true;
    }
  };

  const byMethod = (['POST', 'GET'] as const).flatMap((m) =>
    cases.filter((c) => m === 'POST' || queryString(c.body) !== null).map((c) => [m, c.what, c] as const),
  );
  test.for(byMethod)('%s, %s: the same status, headers and body as through Yoga', async ([method, _what, c]) => {
    const viaYoga = await send(c, false, method);
    const direct = await send(c, true, method);
    expect(direct).toEqual(viaYoga);
    expect(direct.status).toBeLessThan(500);
    expect(direct.text).not.toMatch(/"stack"|node_modules|\.ts:\d+/);
  });

  test('answers the plain requests itself and declines the rest, unchanged, to Yoga', async ({ app: t }) => {
    const log = pino({ level: 'silent' });
    const direct = directJson(createGraphQL(t.app.deps, t.app.gate, t.app.stream, log));
    const post = (body: string, headers: Record<string, string> = {}) =>
      direct({
        method: 'POST',
        url: '/graphql',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.reader}`, ...headers },
        body,
        serverContext: { requestId: 'req_direct' },
      });
    const answered = await post(JSON.stringify({ query: FEED, variables: { first: 1 } }));
    expect(answered).toMatchObject({ status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8' } });
    expect(JSON.parse(answered!.body).data.events.edges).toEqual([]);
    expect((await post(JSON.stringify({ query: '{ nope }' }), STRICT))?.status).toBe(400);
    const plain = JSON.stringify({ query: '{ viewer { scopes } }' });
    for (const [body, headers] of [
      ['{"query": ', {}],
      [JSON.stringify([{ query: '{ viewer { scopes } }' }]), {}],
      [JSON.stringify({ query: 'subscription { events { id } }' }), {}],
      [plain, { accept: 'text/event-stream' }],
      [plain, { 'content-type': 'application/graphql+json' }],
    ] as const) {
      expect(await post(body, headers), `${body} ${JSON.stringify(headers)}`).toBeUndefined();
    }
    const get = (qs: Record<string, string>) =>
      direct({
        method: 'GET',
        url: `/graphql?${new URLSearchParams(qs)}`,
        headers: { authorization: `Bearer ${tokens.reader}` },
        serverContext: { requestId: 'req_direct' },
      });
    expect(await get({ query: FEED, variables: '{"first":1}' })).toMatchObject({ status: 200 });
    for (const qs of [
      { query: CREATE } as Record<string, string>, // a mutation by GET: Yoga's 405
      { query: FEED, variables: '{"first":' },
      { query: FEED, nope: '1' },
      { variables: '{}' },
    ])
      expect(await get(qs), JSON.stringify(qs)).toBeUndefined();
  });

  test('picks the JSON media type as Yoga does', () => {
    expect(acceptedJsonType(undefined)).toBe('application/json');
    expect(acceptedJsonType('*/*')).toBe('application/json');
    expect(acceptedJsonType('application/graphql-response+json')).toBe('application/graphql-response+json');
    expect(acceptedJsonType('application/graphql-response+json, application/json;q=0.9')).toBe('application/graphql-response+json');
    expect(acceptedJsonType('application/json; charset=latin1')).toBeUndefined();
    expect(acceptedJsonType('text/event-stream')).toBeUndefined();
  });
});
