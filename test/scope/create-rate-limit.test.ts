import { describe, expect } from 'vitest';
import { auditRows, unitCount } from '../support/db-access.ts';
import { appTest, type TestApp, buildOrg, buildTenant, buildToken, expectErrorResponse } from '../support/kit.ts';

// Default configuration: 150 creates per hour per (organization, token, family).
const test = appTest();
test.beforeAll(async ({ app: t }) => {
  // Start at the top of an hour so "one hour later" is unambiguous.
  t.clock.set(new Date('2030-01-01T00:00:00Z'));
});

const SCOPES = ['units:read', 'units:create'];
const LIMIT = 150;
const unit = (i: number) => ({ type: 'post', caption: `c${i}` });

const viaRoute = (t: TestApp, token: string, i: number, headers?: Record<string, string>) =>
  t.http.post('/api/units/create', unit(i), { token, headers });
const viaExec = (t: TestApp, token: string, i: number, headers?: Record<string, string>) =>
  t.http.post('/api/scopes_exec', { scope: 'units:create', data: unit(i) }, { token, headers });

// Ten at a time (well inside the Surface A burst): the budget is what is counted, not the order, and
// 150 sequential requests take longer than the test timeout on a loaded 2-core machine.
async function spend(n: number, send: (i: number) => ReturnType<typeof viaRoute>) {
  for (let start = 0; start < n; start += 10) {
    const batch = Array.from({ length: Math.min(10, n - start) }, (_, k) => start + k);
    for (const [k, res] of (await Promise.all(batch.map((i) => send(i)))).entries()) {
      expect(res.status, `create #${batch[k]! + 1}: ${res.text}`).toBe(200);
    }
  }
}

describe('create rate limit', () => {
  test('allows 150 creates per hour; the 151st is 400 create_rate_limit_exceeded', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, SCOPES);
    const first = await viaRoute(t, token, 0);
    expect(first.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
    expect(first.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 1));
    const resetAt = Number(first.headers.get('x-ratelimit-reset'));
    expect(resetAt * 1000).toBe(t.clock.now().getTime() + 3600_000);
    await spend(LIMIT - 2, (i) => viaRoute(t, token, i + 1));
    const last = await viaRoute(t, token, LIMIT);
    expect(last.status).toBe(200);
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');

    const over = await viaRoute(t, token, LIMIT + 1);
    expectErrorResponse(over, 400, 'create_rate_limit_exceeded');
    expect(Number(over.headers.get('retry-after'))).toBe(3600);
    expect(over.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(over.headers.get('x-ratelimit-reset')).toBe(String(resetAt));
    expect(await unitCount(t, org.id)).toBe(LIMIT);
    const audit = await auditRows(t, org.id);
    expect(audit.at(-1)).toMatchObject({ scope: 'units:create', outcome: 'refused', reason: 'create_rate_limit_exceeded' });

    // Reads and deletes are not create actions.
    expect((await t.http.post('/api/units/list', {}, { token })).status).toBe(200);
  });

  test('/units/create and /scopes_exec units:create share one budget', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, SCOPES);
    await spend(LIMIT / 2, (i) => viaRoute(t, token, i));
    const exec = await viaExec(t, token, 0);
    expect(exec.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT / 2 - 1));
    await spend(LIMIT / 2 - 1, (i) => viaExec(t, token, i + 1));
    const overExec = await viaExec(t, token, 999);
    expectErrorResponse(overExec, 400, 'create_rate_limit_exceeded');
    expect(overExec.headers.get('x-ratelimit-remaining')).toBe('0');
    expectErrorResponse(await viaRoute(t, token, 999), 400, 'create_rate_limit_exceeded');
    expect(await unitCount(t, org.id)).toBe(LIMIT);
  });

  test('a second token of the same organization has its own budget; one hour later creates work again', async ({ app: t }) => {
    const org = await buildOrg(t);
    const one = await buildToken(t, org, SCOPES);
    const two = await buildToken(t, org, SCOPES);
    await spend(LIMIT, (i) => viaRoute(t, one.secret, i));
    expectErrorResponse(await viaRoute(t, one.secret, 0), 400, 'create_rate_limit_exceeded');
    const other = await viaRoute(t, two.secret, 0);
    expect(other.status, other.text).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 1));

    t.clock.advance(3600_000);
    const again = await viaRoute(t, one.secret, 0);
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 1));
    expect(await unitCount(t, org.id)).toBe(LIMIT + 2);
  });

  test('replays and failed creates do not spend quota; a replay still answers once the budget is spent', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, SCOPES);
    const key = { 'Idempotency-Key': 'replayed' };
    const original = await viaRoute(t, token, 0, key);
    for (let i = 0; i < 5; i++) {
      const replay = await viaRoute(t, token, 0, key);
      expect(replay.body).toEqual({ unit: original.body.unit, duplicate: true });
      expect((await viaExec(t, token, 0, key)).body.object.duplicate).toBe(true);
    }
    for (let i = 0; i < 5; i++) {
      expectErrorResponse(await t.http.post('/api/units/create', { type: 'post', caption: 7 }, { token }), 400, 'invalid_request');
    }
    await spend(LIMIT - 1, (i) => viaRoute(t, token, i + 1));
    expectErrorResponse(await viaRoute(t, token, 999), 400, 'create_rate_limit_exceeded');
    const late = await viaRoute(t, token, 0, key);
    expect(late.status, late.text).toBe(200);
    expect(late.body).toEqual({ unit: original.body.unit, duplicate: true });
    expect(await unitCount(t, org.id)).toBe(LIMIT);
  });

  test('concurrent creates never overshoot the limit', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, SCOPES);
    await spend(LIMIT - 10, (i) => viaRoute(t, token, i));
    const burst = await Promise.all(Array.from({ length: 25 }, (_, i) => (i % 2 ? viaRoute(t, token, i) : viaExec(t, token, i))));
    expect(burst.filter((r) => r.status === 200)).toHaveLength(10);
    for (const r of burst.filter((r) => r.status !== 200)) expectErrorResponse(r, 400, 'create_rate_limit_exceeded');
    expect(await unitCount(t, org.id)).toBe(LIMIT);
  });
});
