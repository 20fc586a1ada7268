import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect } from 'vitest';
import { CLI_BIN, cliRunner } from '../support/cli.ts';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { toolError, toolValue } from './helpers.ts';

/**
 * `platform mcp` serves the same tools on stdio to a local agent: it relays
 * to the server's `/mcp` with the key of the saved profile (`platform login`),
 * and `--read-only` hides every change.
 */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
const cli = cliRunner(() => t.origin);

async function stdioClient(args: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_BIN, 'mcp', ...args],
    env: cli.env() as Record<string, string>,
    cwd: cli.cwd,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'stdio-agent', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

test('platform mcp reads the key from the profile and serves its tools; --read-only hides changes', async () => {
  const { token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
  expect((await cli.run(['login', '--api-key', token])).code).toBe(0);

  const client = await stdioClient();
  const names = (await client.listTools()).tools.map((x) => x.name);
  expect(names).toContain('webhook_endpoints_create');
  const created = await client.callTool({ name: 'webhook_endpoints_create', arguments: { url: 'https://a.example/hook' } });
  expect(toolValue(created).secret).toBeNull();
  const missing = toolError(
    await client.callTool({ name: 'webhook_endpoints_retrieve', arguments: { id: 'we_00000000000000000000000000' } }),
  );
  expect(missing.code).toBe('resource_missing');
  await client.close();

  const ro = await stdioClient(['--read-only']);
  const roNames = (await ro.listTools()).tools.map((x) => x.name);
  expect(roNames).toContain('webhook_endpoints_list');
  expect(roNames).not.toContain('webhook_endpoints_create');
  await ro.close();
});
