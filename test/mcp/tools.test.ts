import { describe, expect } from 'vitest';
import { ACTIONS } from '../../src/domain/registry.ts';
import { IMPLICIT_SCOPES } from '../../src/domain/scope/catalogue.ts';
import { TOOLS, toolName } from '../../src/mcp/tools.ts';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { connectMcp, toolError, toolValue } from './helpers.ts';

/**
 * The MCP tools are the registry's actions: one each, named and described
 * from it, visible by the key's scopes, hidden when they change something in
 * read-only mode, run by the same action runner as REST.
 */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

describe('tools from the registry', () => {
  test('every action is a tool, with its summary, its input as JSON Schema 2020-12 and its output schema', () => {
    expect(TOOLS.map((x) => x.name)).toEqual(ACTIONS.map(toolName));
    for (const tool of TOOLS) {
      expect(tool.description.startsWith(tool.action.summary)).toBe(true);
      expect(tool.inputSchema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema.type).toBe('object');
      for (const p of tool.action.params) expect(tool.inputSchema.required).toContain(p);
      expect('idempotency_key' in (tool.inputSchema.properties as object)).toBe(tool.mutation);
    }
  });

  test('a key lists only the tools its scopes allow; read-only mode hides every change', async () => {
    const { token } = await buildTenant(t, ['webhooks:read', 'webhooks:write', 'events:read']);
    const client = await connectMcp(t.origin, token);
    const names = (await client.listTools()).tools.map((x) => x.name);
    const scopes = new Set(['webhooks:read', 'webhooks:write', 'events:read', ...IMPLICIT_SCOPES]);
    const allowed = TOOLS.filter((x) => scopes.has(x.action.scope) && (x.action.alsoNeeds ?? []).every((s) => scopes.has(s))).map(
      (x) => x.name,
    );
    expect(names.sort()).toEqual([...allowed, 'wait_for_operation'].sort());
    expect(names).toContain('webhook_endpoints_create');
    await client.close();

    const ro = await connectMcp(t.origin, token, { readOnly: true });
    const roNames = (await ro.listTools()).tools.map((x) => x.name);
    expect(roNames).toContain('webhook_endpoints_list');
    expect(roNames).not.toContain('webhook_endpoints_create');
    await expect(ro.callTool({ name: 'webhook_endpoints_create', arguments: { url: 'https://a.example/h' } })).rejects.toThrow(
      /Unknown tool/,
    );
    await ro.close();
  });

  test('a call runs the action: the same value REST reads', async () => {
    const { token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const client = await connectMcp(t.origin, token);
    const created = toolValue(await client.callTool({ name: 'webhook_endpoints_create', arguments: { url: 'https://a.example/h' } }));
    expect(created.object).toBe('webhook_endpoint');
    const viaMcp = toolValue(await client.callTool({ name: 'webhook_endpoints_retrieve', arguments: { id: created.id } }));
    const viaRest = await t.http.get(`/v1/platform/webhook_endpoints/${created.id}`, { token });
    expect(viaMcp).toEqual(viaRest.body.webhook_endpoint);
    await client.close();
  });

  test('errors are tool results with the API code, param and request id; a tool outside the scopes is missing_scope, nothing done', async () => {
    const { token } = await buildTenant(t, ['webhooks:read']);
    const client = await connectMcp(t.origin, token);
    const refused = toolError(await client.callTool({ name: 'webhook_endpoints_create', arguments: { url: 'https://a.example/h' } }));
    expect(refused.code).toBe('missing_scope');
    const list = toolValue(await client.callTool({ name: 'webhook_endpoints_list', arguments: {} }));
    expect(list.data).toEqual([]);
    const missing = toolError(
      await client.callTool({ name: 'webhook_endpoints_retrieve', arguments: { id: 'we_00000000000000000000000000' } }),
    );
    expect(missing.code).toBe('resource_missing');
    const bad = toolError(await client.callTool({ name: 'webhook_endpoints_list', arguments: { limit: 1000 } }));
    expect([bad.code, bad.param]).toEqual(['invalid_request', 'limit']);
    await client.close();
  });
});
