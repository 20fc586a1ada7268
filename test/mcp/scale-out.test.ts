import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect } from 'vitest';
import { appTest, buildTenant, emitEvent, onPostgres, secondAppOnPostgres, type TestApp } from '../support/kit.ts';
import { connectMcp, toolValue } from './helpers.ts';

/**
 * One MCP session across two server processes on one PostgreSQL: the session
 * lives in the database, so a request that lands on the other process is
 * served (never 404), a subscription made there is honoured by the process
 * holding the session's stream, and ending it anywhere ends it everywhere.
 */
const test = appTest();
let t: TestApp;
const second = secondAppOnPostgres(test);
test.beforeAll(({ app }) => void (t = app));

describe.skipIf(!onPostgres())('sessions that survive N processes', () => {
  test('a session opened on A is served by B; B subscribes, A holds the stream and tells; ending it on B ends it on A', async () => {
    const { token, org } = await buildTenant(t, ['events:read', 'webhooks:write']);
    const onA = await connectMcp(t.origin, token);
    const session = (onA.transport as StreamableHTTPClientTransport).sessionId!;
    let told!: () => void;
    const notified = new Promise<void>((r) => (told = r));
    onA.setNotificationHandler(ResourceUpdatedNotificationSchema, () => told());

    const onB = new Client({ name: 'same-session-on-b', version: '1' });
    await onB.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', second()!.origin), {
        sessionId: session,
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    expect((await onB.listTools()).tools.map((x) => x.name)).toContain('webhook_endpoints_create');
    const created = toolValue(await onB.callTool({ name: 'webhook_endpoints_create', arguments: { url: 'https://a.example/h' } }));
    expect(created.id).toMatch(/^we_/);
    await onB.subscribeResource({ uri: 'platform://events' });
    // A's GET stream opened right after initialize; wait until A is listening before the event.
    await expect.poll(() => t.app.stream.subscriberCount, { timeout: 10_000 }).toBeGreaterThan(0);
    await emitEvent(t, org.id);
    await notified;

    await (onB.transport as StreamableHTTPClientTransport).terminateSession();
    await expect(onA.listTools()).rejects.toThrow(/404|Session not found/);
    await onA.close();
    await onB.close();
  });
});
