import { expect } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { appTest, buildTenant } from '../support/kit.ts';
import { connectMcp, toolValue } from './helpers.ts';

/** MCP_EXPOSE_SECRETS=1: the operator lets MCP answers show the secrets an action reveals once. */
const test = appTest({ config: { mcp: loadConfig({ MCP_EXPOSE_SECRETS: '1' }).mcp } });

test('with MCP_EXPOSE_SECRETS the webhook secret is answered once, as REST answers it', async ({ app: t }) => {
  const { token } = await buildTenant(t, ['webhooks:write']);
  const client = await connectMcp(t.origin, token);
  const created = await client.callTool({ name: 'webhook_endpoints_create', arguments: { url: 'https://a.example/hook' } });
  expect(toolValue(created).secret).toMatch(/^whsec_/);
  expect(created._meta?.withheld).toBeUndefined();
  await client.close();
});
