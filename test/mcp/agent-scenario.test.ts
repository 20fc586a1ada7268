import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { CLI_BIN, cliRunner } from '../support/cli.ts';
import { appTest, buildTenant, buildToken, type TestApp } from '../support/kit.ts';
import { connectMcp, toolError, toolValue } from './helpers.ts';

/**
 * What an agent with only a scoped key does, through the official SDK client,
 * over Streamable HTTP and over stdio (`platform mcp`): it lists its tools,
 * creates a webhook endpoint (and sees no secret), asserts a claim, launches
 * a distribution and waits for its operation, reads the feed after a cursor,
 * and is refused a tool outside its scopes with nothing changed.
 */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
const cli = cliRunner(() => t.origin);

const SCOPES = ['webhooks:read', 'webhooks:write', 'assertions:write', 'distributions:write', 'distributions:launch', 'events:read'];

async function scenario(connect: (token: string) => Promise<Client>) {
  const tenant = await buildTenant(t, SCOPES);
  const agent = await connect(tenant.token);

  const tools = (await agent.listTools()).tools.map((x) => x.name);
  expect(tools).toEqual(
    expect.arrayContaining(['webhook_endpoints_create', 'assertions_create', 'distributions_create', 'wait_for_operation', 'events_list']),
  );
  expect(tools).not.toContain('programs_create');

  const endpoint = toolValue(await agent.callTool({ name: 'webhook_endpoints_create', arguments: { url: 'https://agent.example/hook' } }));
  expect(endpoint.secret).toBeNull();

  const claim = toolValue(
    await agent.callTool({ name: 'assertions_create', arguments: { external_user_id: randomUUID(), issuer: 'acme', key: 'verified' } }),
  );
  expect(claim.action).toBe('asserted');

  const launched = toolValue(
    await agent.callTool({
      name: 'distributions_create',
      arguments: { name: 'Launch', budget: 0, deployments: [{ provider: 'sandbox', config: {} }] },
    }),
  );
  const op = toolValue(await agent.callTool({ name: 'wait_for_operation', arguments: { id: launched.operation.id } }));
  expect(op.status).toBe('succeeded');

  const page = (await agent.readResource({ uri: 'platform://events?limit=1' })).contents[0] as { text: string };
  const feed = JSON.parse(page.text);
  expect(feed.data).toHaveLength(1);
  const after = toolValue(await agent.callTool({ name: 'events_list', arguments: { starting_after: String(feed.data[0].seq) } }));
  expect(after.data.length).toBeGreaterThan(0);
  expect(after.data.every((e: { seq: number }) => e.seq > feed.data[0].seq)).toBe(true);

  const refused = toolError(await agent.callTool({ name: 'programs_create', arguments: { name: 'Nope' } }));
  expect(refused.code).toBe('missing_scope');
  const reader = await buildToken(t, tenant.org, ['programs:read']);
  expect((await t.http.get('/v1/platform/programs', { token: reader.secret })).body.data).toEqual([]);
  await agent.close();
}

describe('an agent with a scoped key', () => {
  test('over Streamable HTTP', async () => {
    await scenario((token) => connectMcp(t.origin, token));
  });

  test('over stdio (platform mcp)', async () => {
    await scenario(async (token) => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI_BIN, 'mcp'],
        env: cli.env({ PLATFORM_API_KEY: token }) as Record<string, string>,
        cwd: cli.cwd,
        stderr: 'pipe',
      });
      const client = new SdkClient({ name: 'stdio-agent', version: '1.0.0' });
      await client.connect(transport);
      return client;
    });
  });
});
