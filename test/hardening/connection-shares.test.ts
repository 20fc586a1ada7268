import { connect, type Socket } from 'node:net';
import { afterAll, describe, expect } from 'vitest';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.ts';
import { appTest, type TestApp } from '../support/kit.ts';
import { waitUntil, withTimeout, wsUrl } from '../support/stream-client.ts';

/**
 * Each remote address has a share of the plain connection budget and of the
 * stream budget (docs/security.md, "Per-address limits"): one client holding
 * its whole share is refused at once (503 with Retry-After, never a hang),
 * others are still served, a trusted proxy has no share, and the totals
 * still apply. A WebSocket upgrade is never refused for want of plain room:
 * 2,000 simultaneous graphql-ws connects from 20 loopback addresses are all
 * acknowledged, with a plain budget of 60.
 *
 * Loopback is 127.0.0.0/8 on Linux: a socket bound to 127.0.0.N reaches the
 * server on 127.0.0.1 from that address.
 */
const limits = {
  maxConnections: 60,
  maxConnectionsPerAddress: 20,
  maxStreams: 2_200,
  maxStreamsPerAddress: 100,
};
const PROXY = '127.0.0.3';
const test = appTest({
  config: {
    http: { ...loadConfig({}).http, ...limits },
    clientAddress: { trustedProxies: [PROXY], ipv6PrefixLength: 64 },
  },
});
let t: TestApp;
let port: number;
const opened: { destroy(): void }[] = [];

test.beforeAll(({ app }) => {
  t = app;
  port = Number(new URL(t.origin).port);
});
afterAll(() => {
  for (const s of opened) s.destroy();
});

interface Answer {
  /** The status line and headers, or '' when the server closed without answering. */
  head: string;
  body: string;
  socket: Socket;
}

/** A raw connection from `localAddress` that sends `GET path` (keep-alive unless `close`) and resolves on its answer or close. */
function get(localAddress: string, path = '/healthz', close = false): Promise<Answer> {
  return send(localAddress, `GET ${path} HTTP/1.1\r\nHost: x\r\n${close ? 'Connection: close\r\n' : ''}\r\n`);
}

/** A POST from `localAddress` (for a stream's refusal: its answer is a whole 503). */
function post(localAddress: string, path: string, headers: Record<string, string>, body: string): Promise<Answer> {
  const lines = Object.entries({ Host: 'x', ...headers, 'Content-Length': String(Buffer.byteLength(body)) });
  return send(localAddress, `POST ${path} HTTP/1.1\r\n${lines.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`);
}

function send(localAddress: string, request: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    opened.push(socket);
    let data = '';
    const done = () => {
      const end = data.indexOf('\r\n\r\n');
      resolve({ head: end < 0 ? '' : data.slice(0, end), body: end < 0 ? '' : data.slice(end + 4), socket });
    };
    socket.on('data', (d) => {
      data += d;
      const end = data.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(data)?.[1] ?? Number.NaN);
      if (end >= 0 && data.length - end - 4 >= length) done();
    });
    socket.once('close', done);
    socket.once('error', reject);
    socket.write(request);
  });
}

const status = (a: Answer) => Number(a.head.split(' ')[1] ?? 0);
const header = (a: Answer, name: string) => new RegExp(`\r\n${name}: ([^\r]*)`, 'i').exec(a.head)?.[1];

/** `n` idle keep-alive connections from `localAddress`, each having been answered 200. */
async function hold(localAddress: string, n: number): Promise<Answer[]> {
  const held = await Promise.all(Array.from({ length: n }, () => get(localAddress)));
  expect(held.map(status)).toEqual(held.map(() => 200));
  return held;
}

/** Expects the refusal: 503, Retry-After, Connection: close, the path's envelope, then the server closes. */
async function expectRefused(a: Answer, code = 'service_unavailable') {
  expect(a.head.split('\r\n')[0]).toBe('HTTP/1.1 503 Service Unavailable');
  expect(header(a, 'retry-after')).toBe('1');
  expect(header(a, 'connection')).toBe('close');
  expect(JSON.parse(a.body)).toEqual({ error: code, message: expect.any(String), request_id: header(a, 'request-id') });
  if (!a.socket.destroyed) await withTimeout(new Promise((r) => a.socket.once('close', r)), 5000, 'the server to close');
}

const released = () =>
  waitUntil(
    () => t.app.connections.plain === 0 && t.app.connections.streams === 0 && t.app.connections.addresses === 0,
    () => `every connection released: ${JSON.stringify(t.app.connections)}`,
  );

describe('per-address connection shares', () => {
  test('an address holding its whole plain share is refused at once on its next connection; other addresses are served', async () => {
    const held = await hold('127.0.0.4', limits.maxConnectionsPerAddress);
    // Once per kind of answer: refused before it could hang (the timeout is far below the 10 s headers timeout).
    const next = await withTimeout(get('127.0.0.4', '/api/scopes'), 5000, 'the refusal');
    await expectRefused(next);
    const elsewhere = await get('127.0.0.2', '/healthz', true);
    expect(status(elsewhere)).toBe(200);
    // Closing one of its connections frees room in its share.
    held.pop()!.socket.destroy();
    await waitUntil(() => t.app.connections.plain < limits.maxConnectionsPerAddress, 'the close to be seen');
    expect(status(await get('127.0.0.4', '/healthz', true))).toBe(200);
    for (const h of held) h.socket.destroy();
    await released();
  });

  test('a trusted proxy has no share, and the total plain budget still applies to everyone', async () => {
    // The proxy holds more than a share; two other addresses fill the rest of the total.
    const proxy = await hold(PROXY, 30);
    const a = await hold('127.0.0.4', 20);
    const b = await hold('127.0.0.5', 10);
    expect(t.app.connections.plain).toBe(limits.maxConnections);
    // An address with its share untouched is refused for the total, at once, in its path's envelope (Surface B's here).
    const over = await withTimeout(get('127.0.0.6', '/v1/platform/events'), 5000, 'the refusal');
    expect(status(over)).toBe(503);
    expect(header(over, 'retry-after')).toBe('1');
    expect(JSON.parse(over.body)).toEqual({
      error: { code: 'service_unavailable', message: expect.any(String), param: null, request_id: header(over, 'request-id') },
    });
    for (const h of [...proxy, ...a, ...b]) h.socket.destroy();
    await released();
    expect(status(await get('127.0.0.6', '/healthz', true))).toBe(200);
  });
});

/** A graphql-ws connection from `localAddress`: resolves once acknowledged; rejects with the HTTP status if the upgrade is refused. */
function graphqlWs(localAddress: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(t), 'graphql-transport-ws', { localAddress });
    opened.push({ destroy: () => ws.terminate() });
    ws.once('open', () => ws.send(JSON.stringify({ type: 'connection_init' })));
    ws.on('message', (data) => {
      if (JSON.parse(String(data)).type === 'connection_ack') resolve(ws);
    });
    ws.once('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error(`upgrade answered ${res.statusCode}`), { status: res.statusCode, headers: res.headers })),
    );
    let upgraded = false;
    ws.once('upgrade', () => (upgraded = true));
    ws.once('error', (e) => reject(new Error(`${e.message} upgraded=${upgraded}`)));
    ws.once('close', (code) => reject(new Error(`closed ${code} before connection_ack`)));
  });
}

describe('WebSocket admission', () => {
  test('2,000 simultaneous graphql-ws connects from 20 addresses are all acknowledged; one more from a full address is 503 with Retry-After', async () => {
    const addresses = Array.from({ length: 20 }, (_, i) => `127.0.0.${i + 2}`).filter((a) => a !== PROXY);
    addresses.push('127.0.0.22'); // 20 addresses, the trusted proxy left out
    const perAddress = limits.maxStreamsPerAddress;
    const refusedBefore = t.app.connections.refused;
    const results = await withTimeout(
      Promise.allSettled(addresses.flatMap((a) => Array.from({ length: perAddress }, () => graphqlWs(a)))),
      // A second or two on an idle machine; 36 s were seen with 2 cores shared by 30 busy processes.
      60_000,
      'the 2,000 acknowledgements',
    );
    const failed = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
    expect({
      acknowledged: results.length - failed.length,
      failed: [...new Set(failed)],
      refused: t.app.connections.refused - refusedBefore,
    }).toEqual({
      acknowledged: 2_000,
      failed: [],
      refused: 0,
    });
    expect(t.app.connections.streams).toBe(2_000);

    // 127.0.0.2 holds its whole stream share: its next upgrade is answered 503, not left to hang.
    const refused = await withTimeout(
      graphqlWs('127.0.0.2').then(
        () => undefined,
        (e: { status?: number; headers?: Record<string, string> }) => e,
      ),
      5000,
      'the refused upgrade',
    );
    expect(refused?.status).toBe(503);
    expect(refused?.headers?.['retry-after']).toBe('1');
    // Every address holds its whole stream share: an SSE stream asked for on a plain connection is refused too, in
    // GraphQL's envelope (MCP's streams: test/mcp/stream-budget.test.ts).
    const sse = await withTimeout(
      post(
        '127.0.0.4',
        '/graphql',
        { Accept: 'text/event-stream', 'Content-Type': 'application/json' },
        '{"query":"subscription { __typename }"}',
      ),
      5000,
      'the refused SSE stream',
    );
    expect([status(sse), header(sse, 'retry-after')]).toEqual([503, '1']);
    expect(JSON.parse(sse.body).errors[0].extensions.code).toBe('service_unavailable');
    sse.socket.destroy(); // a 503 on a keep-alive connection: it would stay open

    // With its plain share full too, it is refused as it connects: the 503 arrives before it asks anything.
    const plain = await hold('127.0.0.2', limits.maxConnectionsPerAddress);
    const atAccept = await withTimeout(get('127.0.0.2', '/api/scopes'), 5000, 'the refusal');
    await expectRefused(atAccept);
    // Other addresses are still served.
    expect(status(await get('127.0.0.23', '/healthz', true))).toBe(200);

    for (const p of plain) p.socket.destroy();
    for (const r of results) if (r.status === 'fulfilled') r.value.terminate();
    await released();
  }, 120_000);
});
