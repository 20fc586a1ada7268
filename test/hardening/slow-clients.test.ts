import { connect, type Socket } from 'node:net';
import pino from 'pino';
import { afterAll, describe, expect } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { appendEvents, SseSubscription, subscribeLive, waitUntil, withTimeout, wsClient } from '../support/stream-client.ts';

/**
 * Slow and idle clients are closed by the server's timeouts (short ones
 * here), live streams are exempt, plain connections have a budget of their
 * own, and a client that goes away mid-request is not a server error.
 */
const limits = {
  headersTimeoutMs: 400,
  requestTimeoutMs: 800,
  idleTimeoutMs: 800,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 40,
  maxStreams: 2,
};
const logLines: { level: number; msg: string; err?: unknown }[] = [];
const test = appTest({
  config: { http: { ...loadConfig({}).http, ...limits } },
  log: pino({ level: 'debug' }, { write: (line: string) => void logLines.push(JSON.parse(line)) }),
});
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let port: number;
const sockets: Socket[] = [];

test.beforeAll(({ app }) => {
  t = app;
  port = Number(new URL(t.origin).port);
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
});

interface RawConnection {
  socket: Socket;
  /** What the server sent. */
  received(): string;
  /** Resolves with the ms from connect to close (rejects after `ms`). */
  closed(ms: number): Promise<number>;
}

function raw(): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    let data = '';
    const opened = Date.now();
    const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now() - opened)));
    socket.on('data', (d) => (data += d)); // read, so the client sees the server's FIN
    socket.on('error', () => {});
    socket.once('connect', () =>
      resolve({ socket, received: () => data, closed: (ms) => withTimeout(closed, ms, 'the server to close the connection') }),
    );
    socket.once('error', reject);
  });
}

/** Writes `text` one chunk every `everyMs` until the socket closes. */
function drip(socket: Socket, text: string, everyMs = 100) {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(timer);
    socket.write(text[i++]!);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

const errorLines = () => logLines.filter((l) => l.level >= 50);

describe('slow clients', () => {
  test('slowloris connections (partial headers, or headers then a slow body) are closed within the configured timeouts', async () => {
    const partial = await Promise.all(Array.from({ length: 10 }, raw));
    for (const c of partial) {
      c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      drip(c.socket, 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n');
    }
    const silent = await Promise.all(Array.from({ length: 5 }, raw)); // connects and never sends a byte
    const slowBody = await Promise.all(Array.from({ length: 10 }, raw));
    slowBody.forEach((c, i) => {
      const path = ['/graphql', '/api/scopes_exec'][i % 2];
      c.socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"query":"`);
      drip(c.socket, 'a'.repeat(1000));
    });

    // The server must close them before the drip could ever complete a request (6.6 s of headers, 100 s of
    // body) and long before Node's defaults would (60 and 300 s); the timeouts themselves are 400 and 800 ms.
    // A loaded machine delays the close by seconds, so the bound is the drip, not a multiple of the timeout.
    await Promise.all([...partial, ...silent].map((c) => c.closed(6_000)));
    await Promise.all(slowBody.map((c) => c.closed(20_000)));
    for (const c of [...partial, ...silent]) {
      // Either closed silently (nothing was sent yet) or answered 408 in the envelope, then closed.
      const got = c.received();
      if (got) expect(got).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*\r\n\r\n\{"error":"request_timeout",/);
    }
    expect(errorLines().map((l) => JSON.stringify(l).slice(0, 600))).toEqual([]);
  });

  test("requests Node's parser refuses (oversized headers, not HTTP) answer in their path's envelope with a Request-Id", async () => {
    const cases = [
      {
        head: `GET /v1/platform/events HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        status: 431,
        code: 'request_header_fields_too_large',
        kind: 'b',
      },
      {
        head: `GET /api/scopes HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        status: 431,
        code: 'request_header_fields_too_large',
        kind: 'a',
      },
      { head: 'HELLO THERE\r\n\r\n', status: 400, code: 'invalid_request', kind: 'a' },
      { head: 'GET /v1/platform/events HTTP/1.1\r\nHost x\r\n\r\n', status: 400, code: 'invalid_request', kind: 'b' },
    ];
    for (const c of cases) {
      const conn = await raw();
      conn.socket.write(c.head);
      await conn.closed(10_000);
      const [head = '', body = ''] = conn.received().split('\r\n\r\n');
      expect(head.split('\r\n')[0]).toBe(`HTTP/1.1 ${c.status} ${c.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}`);
      const requestId = /\r\nRequest-Id: (req_[0-9a-f]{24})/.exec(head)?.[1];
      expect(requestId).toBeDefined();
      expect(head).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
      const parsed = JSON.parse(body);
      if (c.kind === 'b')
        expect(parsed).toEqual({ error: { code: c.code, message: expect.any(String), param: null, request_id: requestId } });
      else expect(parsed).toEqual({ error: c.code, message: expect.any(String), request_id: requestId });
    }
    expect(errorLines().map((l) => JSON.stringify(l).slice(0, 600))).toEqual([]);
  });

  test('a client that aborts mid-body is logged at debug, never as an error', async () => {
    const a = await buildTenant(t, ['webhooks:write']);
    const paths = ['/graphql', '/api/scopes_exec', '/v1/platform/webhook_endpoints'];
    const before = logLines.length;
    for (const path of paths) {
      const c = await raw();
      c.socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.token}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"url":`,
      );
      c.socket.destroy();
    }
    const requestLogs = () =>
      logLines.slice(before).filter((l) => l.msg === 'request' && paths.includes((l as { path?: string }).path ?? ''));
    await waitUntil(() => requestLogs().length >= paths.length, 'the aborted requests to finish');
    expect(errorLines().map((l) => JSON.stringify(l).slice(0, 600))).toEqual([]);
  });
});

describe('live streams', () => {
  test('an SSE stream and a graphql-ws subscription outlive the idle and request timeouts', async () => {
    const a = await buildTenant(t, ['events:read']);
    const client = wsClient(t, `Bearer ${a.token}`);
    const ws = await subscribeLive(t, client);
    const sse = new SseSubscription(t.origin, a.token);
    await waitUntil(() => t.app.stream.subscriberCount === 2, 'both listeners');

    // Nothing flows for three times the longest timeout: a plain request would have been closed.
    await new Promise((r) => setTimeout(r, limits.requestTimeoutMs * 3));
    const [id] = await appendEvents(t.app, a.org.id, [{}]);
    await ws.waitForCount(1);
    await waitUntil(() => sse.events.length >= 1 || sse.ended, 'the SSE event');
    expect(sse.ended).toBe(false);
    expect(ws.errors).toEqual([]);
    expect([ws.events[0]?.id, sse.events[0]?.id]).toEqual([id, id]);

    // The stream budget (2) is full: a third stream is refused, in GraphQL's error shape.
    const third = new SseSubscription(t.origin, a.token);
    await withTimeout(third.done, 5000, 'the refused stream');
    expect(third.status).toBe(503);

    ws.dispose();
    await client.dispose();
    await sse.close();
    await waitUntil(
      () => t.app.stream.subscriberCount === 0 && t.app.connections.streams === 0,
      'the listeners and stream connections released',
    );
  });

  test('plain connections have their own budget: beyond it new ones are refused, open streams keep flowing, and closing frees room', async () => {
    const a = await buildTenant(t, ['events:read']);
    const client = wsClient(t, `Bearer ${a.token}`);
    const ws = await subscribeLive(t, client);

    // Idle keep-alive connections (one request each), until the server refuses more: 503 with Retry-After, closed.
    const held: RawConnection[] = [];
    let refused = 0;
    for (let i = 0; i < limits.maxConnections + 5; i++) {
      const c = await raw();
      c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await waitUntil(() => c.received().includes('\r\n\r\n'), 'an answer', 5000);
      if (c.received().startsWith('HTTP/1.1 200')) held.push(c);
      else {
        expect(c.received()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n[\s\S]*Retry-After: 1\r\n/);
        await c.closed(5000);
        refused++;
      }
    }
    expect(held.length).toBeLessThanOrEqual(limits.maxConnections);
    expect(refused).toBeGreaterThanOrEqual(5);

    const [id] = await appendEvents(t.app, a.org.id, [{}]);
    await ws.waitForCount(1);
    expect(ws.events[0]?.id).toBe(id);

    for (const c of held) c.socket.destroy();
    // The server frees the room when it sees each close; a new connection is then served.
    let served = false;
    const deadline = Date.now() + 5000;
    while (!served && Date.now() < deadline) {
      const c = await raw();
      c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await c.closed(5000);
      served = c.received().startsWith('HTTP/1.1 200');
    }
    expect(served).toBe(true);
    ws.dispose();
    await client.dispose();
    expect(errorLines().map((l) => JSON.stringify(l).slice(0, 600))).toEqual([]);
  });
});
