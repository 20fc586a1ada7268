import pino from 'pino';
import { describe, expect } from 'vitest';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { connectMcp, toolValue } from './helpers.ts';

/**
 * Safe to retry: every change takes an idempotency key; without one the key
 * is derived from the session and the JSON-RPC request id, so a resend of the
 * same request replays it while two calls are two. Secrets an action reveals
 * once are withheld from the transcript, and never logged.
 */
const lines: string[] = [];
const test = appTest({ log: pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) }) });
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const ACCEPT = { accept: 'application/json, text/event-stream' };
const endpoints = async (token: string) => (await t.http.get('/v1/platform/webhook_endpoints', { token })).body.data as { id: string }[];
const create = (key?: string) => ({
  name: 'webhook_endpoints_create',
  arguments: { url: 'https://a.example/hook', ...(key ? { idempotency_key: key } : {}) },
});

describe('idempotency over MCP', () => {
  test('the same key twice: one effect, the first answer again, and the key named in the result', async () => {
    const { token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const client = await connectMcp(t.origin, token);
    const first = await client.callTool(create('agent-key-1'));
    const again = await client.callTool(create('agent-key-1'));
    expect(toolValue(again).id).toBe(toolValue(first).id);
    expect(first._meta).toMatchObject({ idempotency_key: 'agent-key-1', replayed: false });
    expect(again._meta).toMatchObject({ idempotency_key: 'agent-key-1', replayed: true });
    expect(JSON.stringify(first.content)).toContain('idempotency_key: agent-key-1');
    expect(await endpoints(token)).toHaveLength(1);
    await client.close();
  });

  test('two calls without a key: two effects, each with its own derived key', async () => {
    const { token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const client = await connectMcp(t.origin, token);
    const a = await client.callTool(create());
    const b = await client.callTool(create());
    expect(toolValue(a).id).not.toBe(toolValue(b).id);
    expect(a._meta?.idempotency_key).toMatch(/^mcp_/);
    expect(a._meta?.idempotency_key).not.toBe(b._meta?.idempotency_key);
    expect(await endpoints(token)).toHaveLength(2);
    await client.close();
  });

  test('a transport-level resend of one request (same session, same JSON-RPC id) has one effect', async () => {
    const { token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const init = await t.http.post(
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'r', version: '1' } },
      },
      { token, headers: ACCEPT },
    );
    const session = init.headers.get('mcp-session-id')!;
    const send = () =>
      t.http.post(
        '/mcp',
        { jsonrpc: '2.0', id: 7, method: 'tools/call', params: create() },
        { token, headers: { ...ACCEPT, 'mcp-session-id': session } },
      );
    const [one, two] = [await send(), await send()];
    expect(one.body.result.structuredContent.id).toBe(two.body.result.structuredContent.id);
    expect(two.body.result._meta.replayed).toBe(true);
    expect(await endpoints(token)).toHaveLength(1);
  });
});

describe('secrets stay out of transcripts', () => {
  test('create and rotate_secret answer secret: null with a note; REST still shows it once', async () => {
    const { token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const client = await connectMcp(t.origin, token);
    const created = await client.callTool(create());
    expect(toolValue(created).secret).toBeNull();
    expect(created._meta?.withheld).toEqual(['secret']);
    expect(JSON.stringify(created.content)).toMatch(/secret withheld from this transcript/);
    expect(JSON.stringify(created)).not.toMatch(/whsec_/);
    const rotated = await client.callTool({ name: 'webhook_endpoints_rotate_secret', arguments: { id: toolValue(created).id } });
    expect(toolValue(rotated).secret).toBeNull();
    expect(JSON.stringify(rotated)).not.toMatch(/whsec_/);
    const viaRest = await t.http.post(`/v1/platform/webhook_endpoints/${toolValue(created).id}/rotate_secret`, undefined, { token });
    expect(viaRest.body.webhook_endpoint.secret).toMatch(/^whsec_/);
    await client.close();
  });

  test('handoff issuers: create and rotate withhold the generated secret', async () => {
    const { token } = await buildTenant(t, ['handoff:read', 'handoff:write']);
    const client = await connectMcp(t.origin, token);
    const created = await client.callTool({ name: 'handoff_issuers_create', arguments: { name: 'Shop', algorithm: 'HS256' } });
    expect(toolValue(created).secret).toBeNull();
    const rotated = await client.callTool({ name: 'handoff_issuers_rotate', arguments: { id: toolValue(created).id } });
    expect(toolValue(rotated).secret).toBeNull();
    expect(JSON.stringify([created, rotated])).not.toMatch(/hsk_/);
    await client.close();
  });

  test('no secret appears in any log line of the MCP requests above', () => {
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes('/mcp')).length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toMatch(/whsec_|hsk_|sk_platform_live_/);
  });
});
