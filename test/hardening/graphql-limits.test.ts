import { beforeEach, describe, expect } from 'vitest';
import { getIntrospectionQuery } from 'graphql';
import pino from 'pino';
import type { Client } from 'graphql-ws';
import { appTest, buildTenant, expectGraphQLError, type HttpResponse, type TestApp } from '../support/kit.ts';
import { withTimeout, wsClient, type GraphQLErrorLike } from '../support/stream-client.ts';

/**
 * GraphQL request errors are the client's (a catalogue code, no error log),
 * and a document that asks for too much is refused before it executes:
 * depth, aliases, directives, tokens and the cost of the list items it
 * requests, which is also what the rate limiter charges.
 */
const logged: { level: number; msg: string }[] = [];
const test = appTest({ log: pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) }) });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
beforeEach(() => void (logged.length = 0));

const errorLogs = () => logged.filter((l) => l.level >= 50).map((l) => l.msg);
const GRAPHQL_RESPONSE = { accept: 'application/graphql-response+json' };

describe('GraphQL request errors', () => {
  const EVENTS_OF_TYPE = 'query($s: String) { events(type: $s) { edges { cursor } } }';
  const EVENTS_FIRST = 'query($n: Int) { events(first: $n) { edges { cursor } } }';
  const variableCases: [string, string, Record<string, unknown>, string][] = [
    ['a Boolean for a String', EVENTS_OF_TYPE, { s: true }, 's'],
    ['a string for an Int', EVENTS_FIRST, { n: 'abc' }, 'n'],
    ['an Int beyond 32 bits', EVENTS_FIRST, { n: 2147483648 }, 'n'],
    ['a missing required variable', 'query($id: ID!) { event(id: $id) { id } }', {}, 'id'],
  ];

  test.each(variableCases)(
    'a variable given %s is invalid_request naming it, 400 per GraphQL-over-HTTP, never logged',
    async (_what, query, variables, param) => {
      const { token } = await buildTenant(t, ['events:read']);
      const strict = await t.http.graphql(query, variables, { token, headers: GRAPHQL_RESPONSE });
      expect(expectGraphQLError(strict, 'invalid_request', 400).extensions.param).toBe(param);
      // Under legacy application/json, GraphQL-over-HTTP allows 200 or 400.
      const legacy = await t.http.graphql(query, variables, { token });
      expectGraphQLError(legacy, 'invalid_request');
      expect([200, 400]).toContain(legacy.status);
      expect(errorLogs()).toEqual([]);
    },
  );

  test('bad JSON, no query, a parse or validation error and an unknown operation are invalid_request and never logged', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const cases: [string, Promise<HttpResponse>][] = [
      ['bad JSON', t.http.request('POST', '/graphql', undefined, { token, raw: '{"query": ', headers: GRAPHQL_RESPONSE })],
      ['no query', t.http.post('/graphql', { variables: {} }, { token, headers: GRAPHQL_RESPONSE })],
      ['parse error', t.http.graphql('query {', {}, { token, headers: GRAPHQL_RESPONSE })],
      ['validation error', t.http.graphql('{ nope }', {}, { token, headers: GRAPHQL_RESPONSE })],
      [
        'unknown operation',
        t.http.post('/graphql', { query: 'query A { viewer { scopes } }', operationName: 'B' }, { token, headers: GRAPHQL_RESPONSE }),
      ],
      [
        'variables not an object',
        t.http.post('/graphql', { query: '{ viewer { scopes } }', variables: 'x' }, { token, headers: GRAPHQL_RESPONSE }),
      ],
    ];
    for (const [what, pending] of cases) {
      const res = await pending;
      expect(res.status, `${what}: ${res.text}`).toBe(400);
      expectGraphQLError(res, 'invalid_request');
    }
    expect(errorLogs()).toEqual([]);
  });

  test('over graphql-ws, a variable of the wrong type is invalid_request too', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const client = wsClient(t, `Bearer ${token}`);
    try {
      const errors = await wsErrors(client, 'subscription($types: [String!]) { events(types: $types) { id } }', { types: [5] });
      expect(errors[0]?.extensions).toMatchObject({ code: 'invalid_request', param: 'types' });
    } finally {
      await client.dispose();
    }
    expect(errorLogs()).toEqual([]);
  });
});

describe('GraphQL cost limits', () => {
  const pages = (n: number, size = 100) =>
    Array.from({ length: n }, (_, i) => `e${i}: events(first: ${size}) { edges { cursor } }`).join(' ');

  test('3,000 aliased events(first: 100) are refused with 400 query_too_complex before anything executes', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const res = await t.http.graphql(`{ ${pages(3000)} }`, {}, { token });
    expectGraphQLError(res, 'query_too_complex', 400);
    expect(res.text.length).toBeLessThan(1024);
    expect(errorLogs()).toEqual([]);
  });

  test('a refused mutation document changes nothing', async () => {
    const { token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const creates = Array.from(
      { length: 21 },
      (_, i) => `w${i}: createWebhookEndpoint(url: "https://h${i}.example/in", idempotencyKey: "k${i}") { id }`,
    ).join(' ');
    expectGraphQLError(await t.http.graphql(`mutation { ${creates} }`, {}, { token }), 'query_too_complex', 400);
    const list = await t.http.get('/v1/platform/webhook_endpoints', { token });
    expect(list.status, list.text).toBe(200);
    expect(list.body.data).toEqual([]);
  });

  test('each bound answers query_too_complex: aliases, depth, directives, tokens; just within each passes', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const ok = async (query: string) => {
      const res = await t.http.graphql(query, {}, { token });
      expect(res.body.errors, res.text).toBeUndefined();
    };
    const refused = async (query: string, message: RegExp) => {
      const error = expectGraphQLError(await t.http.graphql(query, {}, { token }), 'query_too_complex', 400);
      expect(error.message).toMatch(message);
    };
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `v${i}: viewer { scopes }`).join(' ')} }`;
    await ok(aliases(20));
    await refused(aliases(21), /Aliases limit of 20/);

    // Each inline fragment is one level deeper; the field inside adds the last.
    const nested = (levels: number) => `{ ${'... on Query { '.repeat(levels - 2)}viewer { scopes }${' }'.repeat(levels - 2)} }`;
    await ok(nested(12));
    await refused(nested(13), /depth limit of 12/);

    const directives = (n: number) => `{ viewer { ${'__typename @include(if: true) '.repeat(n)}} }`;
    await ok(directives(50));
    await refused(directives(51), /Directives limit of 50/);

    await refused(`{ viewer { ${'scopes '.repeat(2000)}} }`, /Token limit of 2000/);
    // GraphiQL's introspection query stays within every bound.
    await ok(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true }));
    expect(errorLogs()).toEqual([]);
  });

  test('nested pages multiply: a cost over the limit is refused, the same document with smaller variables passes', async () => {
    const { token } = await buildTenant(t, ['webhooks:read']);
    const query = 'query($n: Int) { webhookEndpoints(first: $n) { edges { node { deliveries(first: $n) { edges { cursor } } } } } }';
    // 100 endpoints + 100 × 100 deliveries = 10,100 items: cost 101 > 100.
    const refused = expectGraphQLError(await t.http.graphql(query, { n: 100 }, { token }), 'query_too_complex', 400);
    expect(refused.message).toMatch(/10100 list items \(cost 101\); the limit is 100/);
    const small = await t.http.graphql(query, { n: 10 }, { token });
    expect(small.body, small.text).toEqual({ data: { webhookEndpoints: { edges: [] } } });
    expectGraphQLError(await t.http.graphql(query, { n: 100 }, { token }), 'query_too_complex', 400);
  });

  test('over graphql-ws, a document over a bound is refused with query_too_complex', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const client = wsClient(t, `Bearer ${token}`);
    try {
      const tooDeep = `subscription { ${'... on Subscription { '.repeat(11)}events { id }${' }'.repeat(11)} }`;
      const errors = await wsErrors(client, tooDeep, {});
      expect(errors[0]?.extensions).toMatchObject({ code: 'query_too_complex' });
    } finally {
      await client.dispose();
    }
  });
});

/** The first errors an operation over graphql-ws gets (bounded wait). */
function wsErrors(client: Client, query: string, variables: Record<string, unknown>): Promise<GraphQLErrorLike[]> {
  return withTimeout(
    new Promise<GraphQLErrorLike[]>((resolve, reject) => {
      client.subscribe(
        { query, variables },
        {
          next: (r) =>
            r.errors?.length ? resolve(r.errors as GraphQLErrorLike[]) : reject(new Error(`unexpected data: ${JSON.stringify(r)}`)),
          error: (e) => (Array.isArray(e) ? resolve(e as GraphQLErrorLike[]) : reject(e)),
          complete: () => reject(new Error('completed without an error')),
        },
      );
    }),
    15_000,
    'the operation error',
  );
}
