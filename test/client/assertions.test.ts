import { describe, expect } from 'vitest';
import { PlatformClient } from '../../packages/client/src/index.ts';
import { appTest, buildTenant } from '../support/kit.ts';

const test = appTest();

describe('assertions against the real server', () => {
  test('create, list, retrieveEvent and revoke, camelCased, with an external-user subject', async ({ app: t }) => {
    const { token } = await buildTenant(t, ['assertions:read', 'assertions:write', 'events:read']);
    const client = new PlatformClient({ apiKey: token, origin: t.origin });
    const subject = { externalUserId: 'user_42', issuer: 'acme' };
    const expiresAt = new Date(Date.now() + 86_400_000);
    const created = await client.assertions.create({ ...subject, key: 'kyc_passed', value: true, expiresAt });
    expect(created).toMatchObject({
      object: 'assertion',
      key: 'kyc_passed',
      action: 'asserted',
      value: 1,
      expiresAt: expiresAt.toISOString(),
    });
    expect(created.entity).toMatch(/^ent_/);
    expect(typeof created.effectiveAt).toBe('string');

    const again = await client.assertions.create({ entity: created.entity, key: 'kyc_passed', value: true, expiresAt });
    expect(again.id).toBe(created.id); // already in that state: nothing appended

    const list = await client.assertions.list({ entity: created.entity });
    expect(list.data.map((a) => a.key)).toEqual(['kyc_passed']);
    expect(list.hasMore).toBe(false);
    expect(await client.assertions.retrieveEvent(created.id)).toEqual(created);

    await client.assertions.revoke({ ...subject, key: 'kyc_passed' });
    expect((await client.assertions.list({ entity: created.entity })).data).toEqual([]);
    const feed = await client.events.list({ type: 'assertion.revoked' });
    expect(feed.data).toHaveLength(1);
    expect(feed.data[0]!.data).toMatchObject({ key: 'kyc_passed' });

    await expect(client.assertions.create({ entity: created.entity, key: 'Bad-Key', value: 1 })).rejects.toMatchObject({
      code: 'invalid_request',
      param: 'key',
      status: 400,
    });
  });
});
