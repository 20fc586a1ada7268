import { describe, expect } from 'vitest';
import { ConnectClient, PlatformError, TokenClient } from '../../packages/client/src/index.ts';
import { appTest, buildOrg, type TestApp } from '../support/kit.ts';
import { buildConnectBrand, hsHandoff } from '../support/connect.ts';

const test = appTest({
  config: { connectRateLimits: { key: { perSecond: 1000, burst: 10_000 }, ip: { perSecond: 1000, burst: 10_000 } } },
});
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

describe('client library: partner connect', () => {
  test('TokenClient creates a publishable key bound to a brand, listed with kind and brand', async () => {
    const org = await buildOrg(t);
    const tokens = new TokenClient({ userToken: org.userToken, dashboardBaseUrl: t.origin });
    const { token, secret } = await tokens.create({ name: 'site', kind: 'publishable', brand: 'second' });
    expect(secret).toMatch(/^pk_live_/);
    expect(token).toMatchObject({ kind: 'publishable', brand: org.brands[1]!.id, scopes: [] });
    expect((await tokens.list()).map((k) => [k.kind, k.brand])).toEqual([['publishable', org.brands[1]!.id]]);
  });

  test('ConnectClient: join keeps the session; status and connect send it; a replayed handoff is a PlatformError', async () => {
    const b = await buildConnectBrand(t);
    const client = new ConnectClient({ publishableKey: b.pk, origin: t.origin });
    await expect(client.status()).rejects.toThrow(/join/);
    const handoff = await hsHandoff(t, b, { sub: 'client-user' });
    const joined = await client.join(handoff);
    expect(client.session).toBe(joined.session);
    expect(joined.status).toMatchObject({ object: 'connect_status', enrollment: { program: b.programId, status: 'pending' } });
    expect(await client.status()).toEqual(joined.status);
    const conn = await client.connect({ provider: 'twitch', accountId: 'tw-1', grants: ['videos:read'] });
    expect(conn).toMatchObject({ object: 'connection', provider: 'twitch', accountId: 'tw-1', grants: ['videos:read'] });
    expect((await client.status()).connections).toEqual([{ id: conn.id, provider: 'twitch', accountId: 'tw-1', status: 'active' }]);
    const again = new ConnectClient({ publishableKey: b.pk, origin: t.origin });
    const err = await again.join(handoff).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.code).toBe('handoff_replayed');
    expect(err.status).toBe(409);
    // A session given up front (kept by the page) works as it is.
    expect((await new ConnectClient({ publishableKey: b.pk, origin: t.origin, session: joined.session }).status()).entity).toBe(
      joined.status.entity,
    );
  });
});
