import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { operationsConfig } from '../operation/helpers.ts';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { createEndpoint, settle, startReceiver, webhookConfig } from './receiver.ts';

/**
 * Endpoint filters beyond type (issue 16): `filter: { brands, subject_types }`, the events feed's definition and
 * validation; an event reaches the endpoint only if every given list matches, in fan-out and in replay.
 */
const test = appTest({ config: { ...webhookConfig(), ...operationsConfig() } });
const rx = await startReceiver();
test.afterAll(() => rx.close());

const SCOPES = ['webhooks:read', 'webhooks:write'];
const P = '/v1/platform';

/** A public test event of `brand` (id or slug; none = organization-level) about a subject of `subjectType`. */
async function emit(t: TestApp, organizationId: string, brand: string | undefined, subjectType = 'entity') {
  const res = await t.http.post(
    '/operator/events',
    {
      organization_id: organizationId,
      type: 'assertion.created',
      subject: { type: subjectType, id: 'x_1' },
      data: {},
      ...(brand ? { brand } : {}),
    },
    { token: t.operatorToken },
  );
  expect(res.status, res.text).toBe(201);
  await t.app.sequencer.flush();
  return res.body.id as string;
}
const ids = (path: string) => rx.for(path).map((r) => r.headers['webhook-id']);

test("a brand filter never delivers another brand's events nor organization-level ones, in fan-out and in replay", async ({ app: t }) => {
  const { org, token } = await buildTenant(t, SCOPES);
  const [main, second] = org.brands;
  const ep = await createEndpoint(t, token, { url: rx.url('/brand-second'), filter: { brands: ['second'] } });
  const all = await createEndpoint(t, token, { url: rx.url('/brand-any') });
  const stored = (await t.http.get(`${P}/webhook_endpoints/${ep.id}`, { token })).body.webhook_endpoint;
  expect(stored.filter).toEqual({ brands: [second!.id], subject_types: null }); // slugs are stored as ids
  expect((await t.http.get(`${P}/webhook_endpoints/${all.id}`, { token })).body.webhook_endpoint.filter).toEqual({
    brands: null,
    subject_types: null,
  });

  const sent = [
    await emit(t, org.id, main!.id),
    await emit(t, org.id, second!.id),
    await emit(t, org.id, undefined),
    await emit(t, org.id, 'second'),
  ];
  await settle(t);
  expect(ids('/brand-second')).toEqual([sent[1], sent[3]]);
  expect(ids('/brand-any').sort()).toEqual([...sent].sort());

  // A replay applies the same filter.
  const res = await t.http.post(
    `${P}/webhook_endpoints/${ep.id}/replay`,
    { starting_after: 0 },
    { token, headers: { 'idempotency-key': randomUUID() } },
  );
  expect(res.status, res.text).toBe(202);
  await t.app.operations.drain();
  await settle(t);
  const replayed = rx.for('/brand-second').filter((r) => r.headers['webhook-replay'] === res.body.operation.id);
  expect(replayed.map((r) => r.headers['webhook-id'])).toEqual([sent[1], sent[3]]);
});

test('filters combine with AND (and with enabled_events); update changes them and null clears them', async ({ app: t }) => {
  const { org, token } = await buildTenant(t, SCOPES);
  const [main] = org.brands;
  const ep = await createEndpoint(t, token, {
    url: rx.url('/combined'),
    enabled_events: ['assertion.created'],
    filter: { brands: [main!.slug], subject_types: ['distribution'] },
  });
  const wanted = await emit(t, org.id, main!.id, 'distribution');
  await emit(t, org.id, main!.id, 'entity');
  await emit(t, org.id, undefined, 'distribution');
  await settle(t);
  expect(ids('/combined')).toEqual([wanted]);

  const narrowed = await t.http.post(`${P}/webhook_endpoints/${ep.id}`, { filter: { subject_types: ['entity'] } }, { token });
  expect(narrowed.body.webhook_endpoint.filter).toEqual({ brands: null, subject_types: ['entity'] });
  const entity = await emit(t, org.id, undefined, 'entity');
  await settle(t);
  expect(ids('/combined')).toEqual([wanted, entity]);

  const cleared = await t.http.post(`${P}/webhook_endpoints/${ep.id}`, { filter: null }, { token });
  expect(cleared.body.webhook_endpoint.filter).toEqual({ brands: null, subject_types: null });
  const any = await emit(t, org.id, main!.id, 'deployment');
  await settle(t);
  expect(ids('/combined')).toEqual([wanted, entity, any]);
});

test('bad filters are 400 with the feed’s codes, naming filter.<list>, on REST and GraphQL', async ({ app: t }) => {
  const { token } = await buildTenant(t, SCOPES);
  const other = await buildTenant(t, SCOPES);
  const url = rx.url('/never');
  const bad: [unknown, string, string][] = [
    [{ brands: ['nowhere'] }, 'brand_not_found', 'filter.brands'],
    [{ brands: [other.org.brands[0]!.id] }, 'brand_not_found', 'filter.brands'], // another organization's: the same answer
    [{ brands: [] }, 'invalid_request', 'filter.brands'],
    [{ subject_types: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'invalid_request', 'filter.subject_types'],
    [{ subject_types: ['x'.repeat(65)] }, 'invalid_request', 'filter.subject_types'],
    [{ subject_types: ['a\u0000b'] }, 'invalid_request', 'filter.subject_types.0'], // the request guard's NUL check names the entry
    [{ brands: 'main' }, 'invalid_request', 'filter.brands'],
    [{ subject_id: 'x' }, 'invalid_request', 'filter.subject_id'],
  ];
  for (const [filter, code, param] of bad) {
    const res = await t.http.post(`${P}/webhook_endpoints`, { url, filter }, { token });
    expect([res.status, res.body.error?.code, res.body.error?.param], JSON.stringify(filter)).toEqual([400, code, param]);
  }
  const gql = await t.http.graphql(
    'mutation($url: String!) { createWebhookEndpoint(url: $url, filter: { brands: ["nowhere"] }) { id } }',
    { url },
    { token },
  );
  expect(gql.body.errors[0].extensions).toMatchObject({ code: 'brand_not_found', param: 'filter.brands' });
  const ok = await t.http.graphql(
    'mutation($url: String!) { createWebhookEndpoint(url: $url, filter: { brands: ["second"], subjectTypes: ["entity"] }) { filter { brands subjectTypes } } }',
    { url },
    { token },
  );
  expect(ok.body.errors, ok.text).toBeUndefined();
  expect(ok.body.data.createWebhookEndpoint.filter).toEqual({ brands: [expect.stringMatching(/^brand_/)], subjectTypes: ['entity'] });
});
