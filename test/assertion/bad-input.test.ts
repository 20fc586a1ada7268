import { describe, expect } from 'vitest';
import { appTest, buildToken, expectPlatformError, type TestApp } from '../support/kit.ts';
import { api as apiFor, expectStatus, setup } from './helpers.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const s = { external_user_id: 'user-1', issuer: 'https://idp.example' };

/** Nothing was appended: no assertion history and no events for the organization. */
async function expectNothingAppended(a: ReturnType<typeof apiFor>) {
  expect(await a.events()).toEqual([]);
}

describe('POST /assertions bad input: 400 invalid_request naming the parameter, nothing appended', () => {
  test.each([
    ['key with an uppercase letter', { ...s, key: 'Verified', value: true }, 'key'],
    ['key starting with a digit', { ...s, key: '1verified', value: true }, 'key'],
    ['key with a dash', { ...s, key: 'is-verified', value: true }, 'key'],
    ['key of 65 characters', { ...s, key: `a${'b'.repeat(64)}`, value: true }, 'key'],
    ['empty key', { ...s, key: '', value: true }, 'key'],
    ['missing key', { ...s, value: true }, 'key'],
    ['string value', { ...s, key: 'k', value: '1' }, 'value'],
    ['"NaN" string value', { ...s, key: 'k', value: 'NaN' }, 'value'],
    ['null value', { ...s, key: 'k', value: null }, 'value'],
    ['object value', { ...s, key: 'k', value: { n: 1 } }, 'value'],
    ['expires_at in the past', { ...s, key: 'k', value: 1, expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
    ['expires_at not RFC 3339', { ...s, key: 'k', value: 1, expires_at: 'tomorrow' }, 'expires_at'],
    ['expires_at without offset', { ...s, key: 'k', value: 1, expires_at: '2999-01-01T00:00:00' }, 'expires_at'],
    ['external_user_id without issuer', { external_user_id: 'u', key: 'k', value: 1 }, 'issuer'],
    ['issuer without external_user_id', { issuer: 'i', key: 'k', value: 1 }, 'external_user_id'],
    ['no subject', { key: 'k', value: 1 }, 'entity'],
    ['entity and an external pair', { entity: 'ent_00000000000000000000000000000000', ...s, key: 'k', value: 1 }, 'external_user_id'],
    ['unknown parameter', { ...s, key: 'k', value: 1, colour: 'red' }, 'colour'],
    [
      'NUL in external_user_id (the database cannot store it)',
      { ...s, external_user_id: 'u\u0000', key: 'k', value: 1 },
      'external_user_id',
    ],
    ['NUL in issuer', { ...s, issuer: 'https://idp.example/\u0000', key: 'k', value: 1 }, 'issuer'],
  ])('%s', async (_name, body, param) => {
    const { api } = await setup(t);
    expectPlatformError(await api.assert(body), 400, 'invalid_request', param);
    await expectNothingAppended(api);
  });

  test('Infinity and NaN cannot pass: 1e999 parses to Infinity and is refused; bare NaN is not JSON', async () => {
    const { api, token } = await setup(t);
    const huge = await t.http.request('POST', '/v1/platform/assertions', undefined, {
      token,
      raw: `{"external_user_id":"u","issuer":"i","key":"k","value":1e999}`,
    });
    expectPlatformError(huge, 400, 'invalid_request', 'value');
    const nan = await t.http.request('POST', '/v1/platform/assertions', undefined, {
      token,
      raw: `{"external_user_id":"u","issuer":"i","key":"k","value":NaN}`,
    });
    expectPlatformError(nan, 400, 'invalid_request');
    await expectNothingAppended(api);
  });

  test('revoke and list validate the same way', async () => {
    const { api } = await setup(t);
    expectPlatformError(await api.revoke({ ...s, key: 'Bad' }), 400, 'invalid_request', 'key');
    expectPlatformError(await api.revoke({ external_user_id: 'u', key: 'k' }), 400, 'invalid_request', 'issuer');
    expectPlatformError(await api.list({ issuer: 'i' }), 400, 'invalid_request', 'external_user_id');
    expectPlatformError(await api.list({}), 400, 'invalid_request', 'entity');
    expectPlatformError(await api.list({ ...s, limit: 0 }), 400, 'invalid_request', 'limit');
    expectPlatformError(await api.list({ ...s, limit: 101 }), 400, 'invalid_request', 'limit');
    expectPlatformError(await api.list({ ...s, include_expired: 'yes' }), 400, 'invalid_request', 'include_expired');
    await expectNothingAppended(api);
  });
});

describe('subject text is data, never SQL', () => {
  test('quotes, backslashes, SQL and non-ASCII in an external pair resolve to one entity and read back unchanged', async () => {
    const { api } = await setup(t);
    const pair = { external_user_id: `o'brien\\'; DROP TABLE entity; --\\x27 $$ E'\\\\'`, issuer: "https://idp.example/ü'\\n\n😀" };
    const created = expectStatus(await api.assert({ ...pair, key: 'verified' }), 201);
    expect(expectStatus(await api.assert({ ...pair, key: 'verified' }), 200).id).toBe(created.id);
    const listed = expectStatus(await api.list(pair), 200);
    expect(listed.data.map((a: { id: string; entity: string }) => [a.id, a.entity])).toEqual([[created.id, created.entity]]);
    const other = expectStatus(await api.assert({ ...pair, external_user_id: `${pair.external_user_id} `, key: 'verified' }), 201);
    expect(other.entity).not.toBe(created.entity);
    expect(expectStatus(await api.revoke({ ...pair, key: 'verified' }), 201).assertion.entity).toBe(created.entity);
  });
});

describe('unknown and foreign ids: 404 resource_missing, the same body as for an id that exists nowhere', () => {
  test('unknown entity, wrong prefix, another organization’s entity and assertion', async () => {
    const mine = await setup(t);
    const theirs = await setup(t);
    const foreign = expectStatus(await theirs.api.assert({ ...s, key: 'verified', value: true }), 201);
    const nowhere = 'ent_00000000000000000000000000000000';
    for (const entity of [nowhere, foreign.entity, 'prog_00000000000000000000000000000000', 'garbage']) {
      const res = await mine.api.assert({ entity, key: 'verified', value: true });
      expectPlatformError(res, 404, 'resource_missing', 'entity');
      expect(res.body.error.message).toBe(`No such entity: '${entity}'`);
      expectPlatformError(await mine.api.revoke({ entity, key: 'verified' }), 404, 'resource_missing', 'entity');
      expectPlatformError(await mine.api.list({ entity }), 404, 'resource_missing', 'entity');
    }
    expectPlatformError(await mine.api.event(foreign.id), 404, 'resource_missing');
    expectPlatformError(await mine.api.event('asrt_00000000000000000000000000000000'), 404, 'resource_missing');
    expectPlatformError(await mine.api.event('evt_00000000000000000000000000000000'), 404, 'resource_missing');
    expectPlatformError(await mine.api.list({ ...s, starting_after: foreign.id }), 404, 'resource_missing', 'starting_after');
    // The same external pair in another organization is another entity.
    const own = expectStatus(await mine.api.assert({ ...s, key: 'verified', value: true }), 201);
    expect(own.entity).not.toBe(foreign.entity);
    expect((await mine.api.events()).map((e) => e.type)).toEqual(['assertion.created']);
    expect((await theirs.api.events()).map((e) => e.type)).toEqual(['assertion.created']);
  });

  test('programs and enrollments of another organization or another brand are 404', async () => {
    const mine = await setup(t);
    const theirs = await setup(t);
    const program = expectStatus(await theirs.api.createProgram({ name: 'Theirs' }), 201);
    const e = expectStatus(await theirs.api.enroll({ program: program.id, ...s }), 201);
    expectPlatformError(await mine.api.program(program.id), 404, 'resource_missing');
    expectPlatformError(await mine.api.addRequirement(program.id, { metric: 'assert:k', operator: 'exists' }), 404, 'resource_missing');
    expectPlatformError(await mine.api.enroll({ program: program.id, ...s }), 404, 'resource_missing', 'program');
    expectPlatformError(await mine.api.enrollment(e.id), 404, 'resource_missing');
    expectPlatformError(await mine.api.move(e.id, 'approve'), 404, 'resource_missing');
    // Another brand of the same organization: the program is not in the selected brand.
    const second = theirs.org.brands[1]!.slug;
    const other = await t.http.get(`/v1/platform/programs/${program.id}`, { token: theirs.token, headers: { 'Service-Brand': second } });
    expectPlatformError(other, 404, 'resource_missing');
    expect((await mine.api.events()).length).toBe(0);
  });
});

describe('program and requirement bad input', () => {
  test.each([
    [{ name: '' }, 'name'],
    [{ name: 'P', grace_period_seconds: -1 }, 'grace_period_seconds'],
    [{ name: 'P', grace_period_seconds: 1.5 }, 'grace_period_seconds'],
    [{ name: 'P', grace_period_seconds: '60' }, 'grace_period_seconds'],
  ])('program %j is 400 on %s', async (body, param) => {
    const { api } = await setup(t);
    expectPlatformError(await api.createProgram(body), 400, 'invalid_request', param);
  });

  test.each([
    [{ metric: 'followers', operator: 'gte', threshold: 1 }, 'metric'],
    [{ metric: 'assert:Bad', operator: 'exists' }, 'metric'],
    [{ metric: 'assert:k', operator: 'gt', threshold: 1 }, 'operator'],
    [{ metric: 'assert:k', operator: 'gte' }, 'threshold'],
    [{ metric: 'assert:k', operator: 'exists', threshold: 1 }, 'threshold'],
  ])('requirement %j is 400 on %s', async (body, param) => {
    const { api } = await setup(t);
    const program = expectStatus(await api.createProgram({ name: 'P' }), 201);
    expectPlatformError(await api.addRequirement(program.id, body), 400, 'invalid_request', param);
    expect(expectStatus(await api.requirements(program.id), 200).data).toEqual([]);
  });
});

describe('scopes', () => {
  test('each route needs its scope: missing_scope names it', async () => {
    const { org } = await setup(t, ['events:read']);
    const token = (await buildToken(t, org, ['events:read'])).secret;
    const a = apiFor(t, token);
    const cases: [Promise<any>, string][] = [
      [a.assert({ ...s, key: 'k', value: 1 }), 'assertions:write'],
      [a.revoke({ ...s, key: 'k' }), 'assertions:write'],
      [a.list(s), 'assertions:read'],
      [a.event('asrt_00000000000000000000000000000000'), 'assertions:read'],
      [a.createProgram({ name: 'P' }), 'program_requirements:write'],
      [a.programs(), 'programs:read'],
      [a.requirements('prog_00000000000000000000000000000000'), 'program_requirements:read'],
      [a.enroll({ program: 'prog_x', ...s }), 'enrollments:write'],
      [a.enrollments(), 'enrollments:read'],
    ];
    for (const [res, scope] of cases) {
      const r = await res;
      expectPlatformError(r, 403, 'missing_scope');
      expect(r.body.error.message).toBe(`missing_scope:${scope}`);
    }
  });
});
