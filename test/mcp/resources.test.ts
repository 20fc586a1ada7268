import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect } from 'vitest';
import { PUBLIC_EVENT_TYPES } from '../../src/domain/event/types.ts';
import { appTest, buildTenant, emitEvent, type TestApp } from '../support/kit.ts';
import { connectMcp } from './helpers.ts';

/**
 * The event log as resources: each event type's schema, the feed and any page
 * of it after a cursor; a subscription to the feed hears of new events from
 * the live stream, at most once per 250 ms.
 */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const text = (r: { contents: unknown[] }) => JSON.parse((r.contents[0] as { text: string }).text);
const orgOf = async (token: string) => (await t.http.post('/api/smoke', {}, { token })).body.org_id as string;

describe('resources', () => {
  test('the event-type catalogue: one resource per public type, read as its JSON Schema', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const client = await connectMcp(t.origin, token);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(
      ['platform://events', ...PUBLIC_EVENT_TYPES.map((x) => `platform://event_types/${x}`)].sort(),
    );
    const type = text(await client.readResource({ uri: 'platform://event_types/assertion.created' }));
    expect(type.type).toBe('assertion.created');
    expect(type.schema.type).toBe('object');
    await expect(client.readResource({ uri: 'platform://event_types/nope' })).rejects.toThrow(/nope/);
    await client.close();
  });

  test('the feed by cursor: the template reads the page after a seq, as REST does', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const org = await orgOf(token);
    for (let i = 0; i < 3; i++) await emitEvent(t, org, 'assertion.created', { n: i });
    const client = await connectMcp(t.origin, token);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual(['platform://events{?starting_after}']);
    const all = text(await client.readResource({ uri: 'platform://events' }));
    expect(all.data).toHaveLength(3);
    const after = text(await client.readResource({ uri: `platform://events?starting_after=${all.data[0].seq}&limit=1` }));
    const rest = await t.http.get(`/v1/platform/events?starting_after=${all.data[0].seq}&limit=1`, { token });
    expect(after).toEqual(rest.body);
    expect(after.data[0].seq).toBe(all.data[1].seq);
    await client.close();
  });

  test('a key without events:read sees no resources', async () => {
    const { token } = await buildTenant(t, ['webhooks:read']);
    const client = await connectMcp(t.origin, token);
    expect((await client.listResources()).resources).toEqual([]);
    await expect(client.readResource({ uri: 'platform://events' })).rejects.toThrow(/missing_scope/);
    await client.close();
  });

  test('subscribing to the feed: new events are told from the live stream, at most once per 250 ms', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const org = await orgOf(token);
    const client = await connectMcp(t.origin, token);
    const told: number[] = [];
    let first: () => void;
    const firstTold = new Promise<void>((r) => (first = r));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      expect(n.params.uri).toBe('platform://events');
      told.push(performance.now());
      first();
    });
    await client.subscribeResource({ uri: 'platform://events' });
    // The GET stream is open once the subscription is stored; an event now must be told.
    await emitEvent(t, org);
    await firstTold;
    const burstStart = performance.now();
    for (let i = 0; i < 5; i++) await emitEvent(t, org, 'assertion.created', { i });
    await new Promise((r) => setTimeout(r, 600));
    const inBurst = told.filter((at) => at >= burstStart);
    expect(inBurst.length).toBeGreaterThan(0);
    expect(inBurst.length).toBeLessThanOrEqual(Math.floor((performance.now() - burstStart) / 250) + 1);
    await client.unsubscribeResource({ uri: 'platform://events' });
    const before = told.length;
    await emitEvent(t, org);
    await new Promise((r) => setTimeout(r, 400));
    expect(told.length).toBe(before);
    await client.close();
  });
});
