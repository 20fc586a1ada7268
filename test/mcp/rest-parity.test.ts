import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect } from 'vitest';
import { REST_BINDINGS } from '../../rest/platform/bindings.ts';
import type { Action } from '../../src/domain/action/action.ts';
import { ACTION_SCOPES, ACTIONS } from '../../src/domain/registry.ts';
import { toolName } from '../../src/mcp/tools.ts';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { connectMcp } from './helpers.ts';

/**
 * Parity with REST, driven by the registry like the REST/GraphQL parity test:
 * for every action REST binds, the tool answers as its route does: the same
 * missing_scope for a key without its scope, the same code and parameter for
 * an unknown id, and the same value for every read that addresses nothing.
 */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const ON_REST = ACTIONS.filter((a) => a.fronts.includes('rest'));
const P = '/v1/platform';

const restPath = (a: Action, ids: Record<string, string>) => REST_BINDINGS[a.name]!.path.replace(/:([a-z_]+)/g, (_, p: string) => ids[p]!);
async function viaRest(token: string, a: Action, ids: Record<string, string> = {}) {
  const b = REST_BINDINGS[a.name]!;
  const res = await t.http.request(b.method, P + restPath(a, ids), b.method === 'GET' ? undefined : {}, { token });
  const value = res.status < 300 && b.envelope ? res.body[b.envelope] : res.body;
  return { status: res.status, value, error: res.status >= 400 ? (res.body.error as { code: string; param: string | null }) : undefined };
}
async function viaMcp(client: Client, a: Action, ids: Record<string, string> = {}) {
  const r = await client.callTool({ name: toolName(a), arguments: ids });
  if (!r.isError) return { value: r.structuredContent, error: undefined };
  return {
    value: undefined,
    error: JSON.parse((r.content as { text: string }[])[0]!.text).error as { code: string; param: string | null },
  };
}
const unknownIds = (a: Action) =>
  Object.fromEntries(a.params.map((p) => [p, p === 'type' ? 'no.such_type' : `${p}_00000000000000000000000000`]));

describe('MCP answers as REST does, action by action', () => {
  test('a key without the scope: missing_scope on both', async () => {
    const { token } = await buildTenant(t, ['org:read']);
    const client = await connectMcp(t.origin, token);
    for (const a of ON_REST.filter((x) => x.scope !== 'org:read' && x.scope !== 'operations:read')) {
      const [rest, mcp] = [await viaRest(token, a, unknownIds(a)), await viaMcp(client, a, unknownIds(a))];
      expect([a.name, rest.error?.code]).toEqual([a.name, 'missing_scope']);
      expect([a.name, mcp.error?.code]).toEqual([a.name, 'missing_scope']);
    }
    await client.close();
  });

  test('an unknown id: the same code and parameter on both', async () => {
    const { token } = await buildTenant(t, [...ACTION_SCOPES]);
    const client = await connectMcp(t.origin, token);
    for (const a of ON_REST.filter((x) => x.params.length > 0)) {
      const [rest, mcp] = [await viaRest(token, a, unknownIds(a)), await viaMcp(client, a, unknownIds(a))];
      expect(rest.error, a.name).toBeDefined();
      expect([a.name, mcp.error?.code, mcp.error?.param]).toEqual([a.name, rest.error?.code, rest.error?.param]);
    }
    await client.close();
  });

  test('every read that addresses nothing: the same value on both', async () => {
    const { token } = await buildTenant(t, [...ACTION_SCOPES]);
    await t.http.post(`${P}/webhook_endpoints`, { url: 'https://a.example/h' }, { token });
    const client = await connectMcp(t.origin, token);
    let compared = 0;
    for (const a of ON_REST.filter((x) => x.params.length === 0 && x.effect.kind === 'read')) {
      const [rest, mcp] = [await viaRest(token, a), await viaMcp(client, a)];
      if (rest.error) expect([a.name, mcp.error?.code]).toEqual([a.name, rest.error.code]);
      else expect([a.name, mcp.value]).toEqual([a.name, rest.value]);
      if (!rest.error) compared++;
    }
    expect(compared).toBeGreaterThan(10);
    await client.close();
  });
});
