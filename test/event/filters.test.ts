import { afterEach, beforeAll, describe, expect } from 'vitest';
import type { Client } from 'graphql-ws';
import { appendEvent } from '../../src/domain/event/event.ts';
import { GRAPHQL_PARAMS, parseEventFilter } from '../../src/domain/event/filter.ts';
import { appTest, buildOrg, buildToken, type TestApp, type TestOrg } from '../support/kit.ts';
import { SseSubscription, waitUntil, wsClient } from '../support/stream-client.ts';

/**
 * The brand and subject filters (src/domain/event/filter.ts), one definition
 * on the feed (REST and the GraphQL query) and on the live stream (graphql-ws
 * and SSE): results, parity, no leak across brands under concurrent writers,
 * and the bad-input matrix.
 */
const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let org: TestOrg;
let other: TestOrg;
let token: string;
const clients: Client[] = [];
const sses: SseSubscription[] = [];

test.beforeAll(async ({ app }) => {
  t = app;
  org = await buildOrg(t, { brands: ['alpha', 'beta'] });
  other = await buildOrg(t, { brands: ['gamma'] });
  token = (await buildToken(t, org, ['events:read'])).secret;
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.dispose();
  await Promise.all(sses.splice(0).map((s) => s.close()));
  await waitUntil(() => t.app.stream.subscriberCount === 0, 'every listener released');
});

const A = () => org.brands[0]!.id;
const B = () => org.brands[1]!.id;

interface Spec {
  brand: string | null;
  type: string;
  subject: [string, string];
}
/** Appends through the domain (one transaction each), sequenced on return; returns the ids. */
async function append(specs: Spec[], organizationId = org.id): Promise<string[]> {
  const ids: string[] = [];
  for (const s of specs) {
    ids.push(
      await t.app.deps.db.transaction((tx) =>
        appendEvent(t.app.deps, tx, {
          test: true,
          organizationId,
          type: s.type,
          subject: { type: s.subject[0], id: s.subject[1] },
          data: {},
          brandId: s.brand,
        }),
      ),
    );
  }
  await t.app.sequencer.flush();
  return ids;
}

const SET: Spec[] = [
  { brand: 'A', type: 'payout.created', subject: ['payout', 'po_1'] },
  { brand: 'B', type: 'payout.created', subject: ['payout', 'po_2'] },
  { brand: null, type: 'assertion.created', subject: ['entity', 'ent_1'] },
  { brand: 'A', type: 'distribution.live', subject: ['distribution', 'dist_1'] },
  { brand: 'B', type: 'enrollment.created', subject: ['enrollment', 'enr_1'] },
  { brand: 'A', type: 'payout.settled', subject: ['payout', 'po_1'] },
  { brand: 'A', type: 'payout.internal_recount', subject: ['payout', 'po_1'] },
];
const resolved = () => SET.map((s) => ({ ...s, brand: s.brand === 'A' ? A() : s.brand === 'B' ? B() : null }));

/** Each case: REST query, GraphQL args, which entries of SET match. */
const CASES = (): { rest: string; gql: Record<string, unknown>; expect: number[] }[] => [
  { rest: 'brands=alpha', gql: { brands: ['alpha'] }, expect: [0, 3, 5] },
  { rest: `brands=${B()},alpha`, gql: { brands: [B(), 'alpha'] }, expect: [0, 1, 3, 4, 5] },
  { rest: `brands=${A()},alpha`, gql: { brands: [A(), 'alpha'] }, expect: [0, 3, 5] },
  { rest: 'subject_types=payout', gql: { subjectTypes: ['payout'] }, expect: [0, 1, 5] },
  { rest: 'subjectTypes=payout,entity', gql: { subjectTypes: ['payout', 'entity'] }, expect: [0, 1, 2, 5] },
  { rest: 'subject_id=po_1', gql: { subjectId: 'po_1' }, expect: [0, 5] },
  { rest: 'brands=beta&subject_types=payout', gql: { brands: ['beta'], subjectTypes: ['payout'] }, expect: [1] },
  { rest: 'type=payout.created&brands=alpha', gql: { type: 'payout.created', brands: ['alpha'] }, expect: [0] },
  { rest: 'type=payout.settled&subject_id=po_1', gql: { type: 'payout.settled', subjectId: 'po_1' }, expect: [5] },
  { rest: 'subject_id=po_1&brands=beta', gql: { subjectId: 'po_1', brands: ['beta'] }, expect: [] },
  { rest: 'subject_types=entity&brands=alpha,beta', gql: { subjectTypes: ['entity'], brands: ['alpha', 'beta'] }, expect: [] },
];

const feed = (query: string, headers: Record<string, string> = {}) =>
  t.http.get(`/v1/platform/events?limit=100&${query}`, { token, headers });
const gqlFeed = (args: Record<string, unknown>) =>
  t.http.graphql(
    `query($type: String, $brands: [String!], $subjectTypes: [String!], $subjectId: String, $after: String, $first: Int) {
      events(type: $type, brands: $brands, subjectTypes: $subjectTypes, subjectId: $subjectId, after: $after, first: $first) {
        edges { node { id type seq brand subject { type id } } } pageInfo { hasNextPage endCursor }
      }
    }`,
    args,
    { token },
  );

const SUBSCRIPTION = /* GraphQL */ `
  subscription($types: [String!], $brands: [String!], $subjectTypes: [String!], $subjectId: String, $startingAfter: String) {
    events(types: $types, brands: $brands, subjectTypes: $subjectTypes, subjectId: $subjectId, startingAfter: $startingAfter) { id seq brand subject { type id } }
  }
`;

/** A graphql-ws subscription collecting ids and errors. */
function wsSubscribe(variables: Record<string, unknown>) {
  const client = wsClient(t, `Bearer ${token}`);
  clients.push(client);
  const got = { ids: [] as string[], brands: [] as (string | null)[], errors: [] as any[] };
  client.subscribe<{ events: { id: string; brand: string | null } }>(
    { query: SUBSCRIPTION, variables },
    {
      next: (r) => {
        if (r.errors) got.errors.push(...r.errors);
        if (r.data?.events) {
          got.ids.push(r.data.events.id);
          got.brands.push(r.data.events.brand);
        }
      },
      error: (err) => got.errors.push(...(Array.isArray(err) ? err : [{ message: String(err) }])),
      complete: () => {},
    },
  );
  return got;
}
function sseSubscribe(variables: Record<string, unknown>) {
  const s = new SseSubscription(t.origin, token, variables as never, { query: SUBSCRIPTION });
  sses.push(s);
  return s;
}

describe('feed filters', () => {
  let ids: string[];
  beforeAll(async () => {
    ids = await append(resolved());
  });

  test('each filter and combination returns exactly its events, the same on REST and GraphQL', async () => {
    for (const c of CASES()) {
      const want = c.expect.map((i) => ids[i]);
      const rest = await feed(c.rest);
      expect(rest.status, `${c.rest}: ${rest.text}`).toBe(200);
      expect(
        rest.body.data.map((e: any) => e.id),
        c.rest,
      ).toEqual(want);
      const gql = await gqlFeed(c.gql);
      expect(gql.body.errors, JSON.stringify(c.gql)).toBeUndefined();
      const nodes = gql.body.data.events.edges.map((e: any) => e.node);
      expect(
        nodes.map((n: any) => n.id),
        JSON.stringify(c.gql),
      ).toEqual(want);
      expect(nodes.map((n: any) => n.brand)).toEqual(rest.body.data.map((e: any) => e.brand));
    }
  });

  test('a brand filter never matches organization-level events; Service-Brand does not narrow the feed', async () => {
    const all = await feed('', { 'Service-Brand': 'beta' });
    expect(all.body.data.map((e: any) => e.id)).toEqual(ids.slice(0, 6));
    const both = await feed('brands=alpha,beta');
    expect(both.body.data.map((e: any) => e.brand)).not.toContain(null);
  });

  test('pages a filtered feed by limit and starting_after on REST and by first/after on GraphQL', async () => {
    const first = await t.http.get('/v1/platform/events?brands=alpha&limit=2', { token });
    expect(first.body.data.map((e: any) => e.id)).toEqual([ids[0], ids[3]]);
    expect(first.body.has_more).toBe(true);
    const next = await t.http.get(`/v1/platform/events?brands=alpha&limit=2&starting_after=${first.body.data[1].id}`, { token });
    expect(next.body.data.map((e: any) => e.id)).toEqual([ids[5]]);
    expect(next.body.has_more).toBe(false);
    const g1 = await gqlFeed({ brands: ['alpha'], first: 2 });
    expect(g1.body.data.events.pageInfo.hasNextPage).toBe(true);
    const g2 = await gqlFeed({ brands: ['alpha'], first: 2, after: g1.body.data.events.pageInfo.endCursor });
    expect(g2.body.data.events.edges.map((e: any) => e.node.id)).toEqual([ids[5]]);
  });
});

describe('subscription filters (graphql-ws and SSE)', () => {
  test('replay then live: each transport delivers exactly the filtered events', async () => {
    const [marker] = await append([{ brand: null, type: 'payout.failed', subject: ['payout', 'po_start'] }]);
    const startSeq = String(
      (await t.http.get('/v1/platform/events?subject_id=po_start', { token })).body.data.find((e: any) => e.id === marker).seq,
    );
    const specs = resolved();
    const replayed = await append(specs);
    const cases = CASES().filter((c) => !('type' in c.gql));
    const subs = cases.map((c) => ({
      c,
      ws: wsSubscribe({ ...c.gql, startingAfter: startSeq }),
      sse: sseSubscribe({ ...c.gql, startingAfter: startSeq }),
    }));
    await waitUntil(() => t.app.stream.subscriberCount === subs.length * 2, 'every listener');
    const live = await append(specs);
    // One sentinel per case, matching it, after the live batch: once a subscriber has its last match, anything filtered out would have come before it.
    const slugToId = (b: string) => (b === 'alpha' ? A() : b === 'beta' ? B() : b);
    const sentinelSpecs: Spec[] = cases.map((c) => ({
      brand: slugToId(((c.gql.brands as string[]) ?? ['alpha'])[0]!),
      type: 'payout.failed',
      subject: [((c.gql.subjectTypes as string[]) ?? ['payout'])[0]!, (c.gql.subjectId as string) ?? 'po_sentinel'],
    }));
    const sentinels = await append(sentinelSpecs);
    // The oracle: an independent reading of the filter's rules (not filter.ts).
    const oracle = (g: Record<string, unknown>, sp: Spec) =>
      !sp.type.includes('internal') &&
      (!g.brands || (sp.brand !== null && (g.brands as string[]).map(slugToId).includes(sp.brand))) &&
      (!g.subjectTypes || (g.subjectTypes as string[]).includes(sp.subject[0])) &&
      (g.subjectId === undefined || g.subjectId === sp.subject[1]);
    const all: [string, Spec][] = [
      ...replayed.map((id, i) => [id, specs[i]!] as [string, Spec]),
      ...live.map((id, i) => [id, specs[i]!] as [string, Spec]),
      ...sentinels.map((id, i) => [id, sentinelSpecs[i]!] as [string, Spec]),
    ];
    for (const { c, ws, sse } of subs) {
      const want = all.filter(([, sp]) => oracle(c.gql, sp)).map(([id]) => id);
      const last = want.at(-1)!;
      expect(sentinels).toContain(last);
      await waitUntil(
        () => ws.ids.includes(last) || ws.errors.length > 0,
        () => `ws ${JSON.stringify(c.gql)} (got ${ws.ids.length}, ${JSON.stringify(ws.errors)})`,
      );
      await waitUntil(
        () => sse.events.some((e) => e.id === last) || sse.errors.length > 0,
        () => `sse ${JSON.stringify(c.gql)}`,
      );
      expect(ws.errors).toEqual([]);
      expect(sse.errors).toEqual([]);
      expect(ws.ids, `ws ${JSON.stringify(c.gql)}`).toEqual(want);
      expect(
        sse.events.map((e) => e.id),
        `sse ${JSON.stringify(c.gql)}`,
      ).toEqual(want);
      // The replayed part is what the feed answers for the same filter.
      const rest = await feed(`${c.rest}&starting_after=${startSeq}`);
      expect(rest.body.data.map((e: any) => e.id).slice(0, c.expect.length)).toEqual(want.slice(0, c.expect.length));
    }
  });

  test('a brand filter never leaks the other brand’s events under concurrent writers in both brands', async () => {
    const ws = wsSubscribe({ brands: ['alpha'] });
    const sse = sseSubscribe({ brands: [B()] });
    await waitUntil(() => t.app.stream.subscriberCount === 2, 'both listeners');
    const writer = (brand: string, n: number) =>
      append(
        Array.from({ length: n }, (_, i) => ({
          brand,
          type: 'payout.created',
          subject: ['payout', `po_${brand}_${i}`] as [string, string],
        })),
      );
    const [a1, b1, a2, b2, unbranded] = await Promise.all([
      writer(A(), 25),
      writer(B(), 25),
      writer(A(), 25),
      writer(B(), 25),
      append(
        Array.from({ length: 10 }, () => ({ brand: null, type: 'payout.created', subject: ['payout', 'po_org'] as [string, string] })),
      ),
    ]);
    const [sentA] = await append([{ brand: A(), type: 'payout.settled', subject: ['payout', 'po_end'] }]);
    const [sentB] = await append([{ brand: B(), type: 'payout.settled', subject: ['payout', 'po_end'] }]);
    await waitUntil(() => ws.ids.includes(sentA!) && sse.events.some((e) => e.id === sentB), 'both sentinels');
    const aIds = new Set([...a1!, ...a2!, sentA!]);
    const bIds = new Set([...b1!, ...b2!, sentB!]);
    expect(new Set(ws.ids)).toEqual(aIds);
    expect(ws.ids).toHaveLength(aIds.size);
    expect(new Set(ws.brands)).toEqual(new Set([A()]));
    expect(new Set(sse.events.map((e) => e.id))).toEqual(bIds);
    expect(sse.events).toHaveLength(bIds.size);
    for (const id of unbranded!) expect(ws.ids.includes(id) || sse.events.some((e) => e.id === id)).toBe(false);
    // The feed agrees with the stream.
    const fed = await t.http.get(
      `/v1/platform/events?brands=alpha&limit=100&starting_after=${ws.ids.length ? (await t.http.get(`/v1/platform/events?subject_id=po_${A()}_0`, { token })).body.data[0].seq - 1 : 0}`,
      { token },
    );
    expect(fed.body.data.filter((e: any) => aIds.has(e.id))).toHaveLength(aIds.size);
    expect(fed.body.data.every((e: any) => e.brand === A())).toBe(true);
  });
});

describe('EventFilter key', () => {
  test('is the same for equivalent filters (slug or id, order, duplicates, legacy type spellings) and differs otherwise', async () => {
    const key = async (input: Record<string, unknown>) => (await parseEventFilter(t.app.deps, org.id, input, GRAPHQL_PARAMS)).key;
    expect(await key({ brands: ['beta', 'alpha', A()] })).toBe(await key({ brands: [A(), B()] }));
    expect(await key({ types: ['program_member.created', 'relationship.created'], subject_types: ['x', 'y'] })).toBe(
      await key({ types: ['relationship.created'], subject_types: ['y', 'x', 'y'] }),
    );
    expect(await key({ types: [] })).toBe(await key({}));
    const distinct = await Promise.all(
      [
        {},
        { brands: ['alpha'] },
        { brands: ['beta'] },
        { subject_types: ['alpha'] },
        { subject_id: 'alpha' },
        { types: ['payout.created'] },
      ].map(key),
    );
    expect(new Set(distinct).size).toBe(distinct.length);
  });
});

describe('bad filter input', () => {
  const tooMany = Array.from({ length: 21 }, (_, i) => `s${i}`);
  const stripVolatile = (b: any) => ({ ...b.error, request_id: undefined, message: b.error.message.replace(/'[^']*'/, "'…'") });

  test('REST: unknown or another organization’s brand (id or slug) is one identical brand_not_found; other bad values are invalid_request naming param; nothing changes', async () => {
    const before = (await feed('')).body.data.map((e: any) => e.id);
    const listeners = t.app.stream.subscriberCount;
    const notFound = [];
    for (const b of [other.brands[0]!.id, 'gamma', 'brand_01a20029071572458fb4fc895a680af4', 'nowhere']) {
      const res = await feed(`brands=alpha,${b}`);
      expect(res.status, res.text).toBe(400);
      notFound.push(stripVolatile(res.body));
    }
    expect(new Set(notFound.map((b) => JSON.stringify(b))).size).toBe(1);
    expect(notFound[0]).toMatchObject({ code: 'brand_not_found', param: 'brands' });

    const cases: [string, string, string][] = [
      ['brands=', 'invalid_request', 'brands'],
      ['brands=alpha,,beta', 'invalid_request', 'brands'],
      [`brands=${tooMany.join(',')}`, 'invalid_request', 'brands'],
      ['brands=al%00pha', 'invalid_request', 'brands'],
      ['subject_types=', 'invalid_request', 'subject_types'],
      [`subject_types=${'x'.repeat(65)}`, 'invalid_request', 'subject_types'],
      [`subject_types=${tooMany.join(',')}`, 'invalid_request', 'subject_types'],
      ['subject_id=', 'invalid_request', 'subject_id'],
      ['subject_id=po%001', 'invalid_request', 'subject_id'],
      [`subject_id=${'x'.repeat(129)}`, 'invalid_request', 'subject_id'],
      ['brands=alpha&brands=beta', 'invalid_request', 'brands'],
      ['brands[]=alpha', 'invalid_request', 'brands[]'],
      ['type=payout.exploded&brands=alpha', 'invalid_event_type', 'type'],
    ];
    for (const [q, code, param] of cases) {
      const res = await feed(q);
      expect(res.status, `${q}: ${res.text}`).toBe(400);
      expect(res.body, q).toEqual({ error: { code, param, message: expect.any(String), request_id: res.headers.get('request-id') } });
    }
    expect((await feed('')).body.data.map((e: any) => e.id)).toEqual(before);
    expect(t.app.stream.subscriberCount).toBe(listeners);
  });

  test('GraphQL query, graphql-ws and SSE: the same codes and params; no listener is registered', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ brands: ['alpha', other.brands[0]!.id] }, 'brand_not_found', 'brands'],
      [{ brands: ['gamma'] }, 'brand_not_found', 'brands'],
      [{ brands: [] }, 'invalid_request', 'brands'],
      [{ brands: tooMany }, 'invalid_request', 'brands'],
      [{ subjectTypes: [] }, 'invalid_request', 'subjectTypes'],
      [{ subjectTypes: ['x'.repeat(65)] }, 'invalid_request', 'subjectTypes'],
      [{ subjectId: '' }, 'invalid_request', 'subjectId'],
    ];
    const codeOf = (errs: any[]) => ({ code: errs[0]?.extensions?.code, param: errs[0]?.extensions?.param });
    for (const [args, code, param] of cases) {
      const q = await gqlFeed(args);
      expect(codeOf(q.body.errors), `query ${JSON.stringify(args)}`).toEqual({ code, param });
      const ws = wsSubscribe(args);
      const sse = sseSubscribe(args);
      await waitUntil(() => ws.errors.length > 0 && (sse.errors.length > 0 || sse.ended), `errors for ${JSON.stringify(args)}`);
      expect(codeOf(ws.errors), `ws ${JSON.stringify(args)}`).toEqual({ code, param });
      expect(codeOf(sse.errors), `sse ${JSON.stringify(args)}`).toEqual({ code, param });
    }
    // Identical brand_not_found for another organization's brand and one that exists nowhere.
    const a = await gqlFeed({ brands: [other.brands[0]!.id] });
    const b = await gqlFeed({ brands: ['brand_01a20029071572458fb4fc895a680af4'] });
    const norm = (e: any) => ({
      ...e,
      message: e.message.replace(/'[^']*'/, "'…'"),
      extensions: { ...e.extensions, request_id: undefined },
    });
    expect(norm(a.body.errors[0])).toEqual(norm(b.body.errors[0]));
    // Wrong types and NUL are refused before the resolver (GraphQL coercion, the input guard).
    for (const vars of [{ brands: [5] }, { subjectId: { x: 1 } }, { subjectId: 'po\u00001' }, { brands: ['al\u0000pha'] }]) {
      const res = await gqlFeed(vars);
      expect(res.status, JSON.stringify(vars)).toBe(400);
      expect(res.body.errors?.length, JSON.stringify(vars)).toBeGreaterThan(0);
    }
    expect(t.app.stream.subscriberCount).toBe(0);
  });
});
