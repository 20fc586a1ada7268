import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { appTest, buildTenant } from '../support/kit.ts';
import { waitUntil } from '../support/stream-client.ts';
import { connectMcp } from './helpers.ts';

/**
 * A stream refused for want of room in the stream budget (docs/security.md, "Per-address limits") is a 503 with
 * `Retry-After` on every front, as a refused connection is: here the budget is one stream, which an MCP client's
 * session stream takes, so a second session stream and a GraphQL SSE subscription are both refused.
 */
const test = appTest({ config: { http: { ...loadConfig({}).http, maxStreams: 1, maxStreamsPerAddress: 1 } } });

test('with the stream budget full, a second MCP session stream and a GraphQL SSE stream are 503 with Retry-After', async ({ app: t }) => {
  const { token } = await buildTenant(t, ['events:read']);
  const client = await connectMcp(t.origin, token);
  try {
    // The SDK client opens its session's GET stream once initialized.
    await waitUntil(
      () => t.app.connections.streams === 1,
      () => `the client's stream: ${JSON.stringify(t.app.connections)}`,
    );
    const transport = client.transport as StreamableHTTPClientTransport;
    const mcp = await fetch(`${t.origin}/mcp`, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'text/event-stream',
        'mcp-session-id': transport.sessionId!,
        'mcp-protocol-version': transport.protocolVersion!,
      },
    });
    expect([mcp.status, mcp.headers.get('retry-after')]).toEqual([503, '1']);
    expect((await mcp.json()).error).toMatchObject({ code: 'service_unavailable', request_id: mcp.headers.get('request-id') });

    const sse = await t.http.post(
      '/graphql',
      { query: 'subscription { __typename }' },
      { token, headers: { accept: 'text/event-stream' } },
    );
    expect([sse.status, sse.headers.get('retry-after')]).toEqual([503, '1']);
    expect(sse.body.errors[0].extensions.code).toBe('service_unavailable');
    expect(t.app.connections.streams).toBe(1);
  } finally {
    await client.close();
  }
});
