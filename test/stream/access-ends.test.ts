import { afterAll, afterEach, describe, expect } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { appTest, buildOrg, buildToken, onPostgres, startSecondApp, type TestApp } from '../support/kit.ts';
import { EVENTS_SUBSCRIPTION, SseSubscription, waitUntil, withTimeout, wsUrl, type GraphQLErrorLike } from '../support/stream-client.ts';

/**
 * An open stream is a use of its token (issue #14): it ends when a new
 * request with the same token would be refused, with the code that request
 * would get. graphql-ws: an `error` message per subscription, then close
 * 4401 (token) or 4503 (kill switch). SSE: a `next` carrying the error, then
 * `complete`, then the response ends. The same on a second process sharing
 * the database (PostgreSQL), through the credential NOTIFY.
 */
const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let b: Awaited<ReturnType<typeof startSecondApp>> | undefined;
const disposers: (() => unknown)[] = [];
test.beforeAll(async ({ app }) => {
  t = app;
  // B's event poll is off: whatever ends its streams comes through NOTIFY.
  if (onPostgres()) b = await startSecondApp(t, { eventStreamPollMs: 3_600_000 });
});
afterEach(async () => {
  await Promise.all(disposers.splice(0).map((d) => d()));
});
afterAll(async () => {
  await t?.http.post('/operator/kill_switch', { engaged: false }, { token: t.operatorToken });
  await b?.stop();
});

/** A graphql-ws connection with two event subscriptions, recording their errors and the close code. */
class WsStream {
  readonly errors: GraphQLErrorLike[][] = [[], []];
  readonly completed = [false, false];
  closeCode: number | undefined;
  private readonly client: Client;
  constructor(origin: string, secret: string) {
    this.client = createClient({
      url: wsUrl({ origin }),
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${secret}` },
      on: { closed: (e) => (this.closeCode ??= (e as { code: number }).code) },
    });
    disposers.push(() => this.client.dispose());
    for (const i of [0, 1]) {
      this.client.subscribe(
        { query: EVENTS_SUBSCRIPTION },
        {
          next: (r) => r.errors && this.errors[i]!.push(...(r.errors as GraphQLErrorLike[])),
          error: (e) => (Array.isArray(e) ? this.errors[i]!.push(...e) : undefined),
          complete: () => (this.completed[i] = true),
        },
      );
    }
  }
}

const sse = (origin: string, secret: string) => {
  const s = new SseSubscription(origin, secret);
  disposers.push(() => s.close().catch(() => {}));
  return s;
};

async function openStreams(origin: string, secret: string, app = t.app) {
  const before = app.stream.subscriberCount;
  const ws = new WsStream(origin, secret);
  const s = sse(origin, secret);
  await waitUntil(() => app.stream.subscriberCount >= before + 3, 'three live listeners');
  return { ws, s };
}

async function expectEnded(streams: { ws: WsStream; s: SseSubscription }, code: string, closeCode: number) {
  const { ws, s } = streams;
  await waitUntil(
    () => ws.closeCode !== undefined && s.ended,
    () => `streams to end (ws close ${ws.closeCode}, sse ended ${s.ended})`,
    10_000,
  );
  for (const errors of ws.errors) expect(errors.map((e) => e.extensions?.code)).toEqual([code]);
  expect(ws.errors[0]![0]!.extensions?.request_id).toMatch(/^req_/);
  expect(ws.closeCode).toBe(closeCode);
  expect(s.errors.map((e) => e.extensions?.code)).toEqual([code]);
  expect(s.frames.slice(-2)).toEqual(['next', 'complete']);
}

const tokenFor = async (extra: Record<string, unknown> = {}) => {
  const org = await buildOrg(t);
  const token = await buildToken(t, org, ['events:read'], extra);
  return { org, ...token };
};

describe('streams end when access ends', () => {
  test('revoking the token ends its graphql-ws and SSE streams (invalid_token, close 4401); other tokens keep streaming', async () => {
    const doomed = await tokenFor();
    const other = await tokenFor();
    const ended = await openStreams(t.origin, doomed.secret);
    const kept = await openStreams(t.origin, other.secret);
    const started = Date.now();
    const res = await t.http.post('/platform/tokens/revoke', { token_id: doomed.id }, { token: doomed.org.userToken });
    expect(res.status, res.text).toBe(200);
    await expectEnded(ended, 'invalid_token', 4401);
    // Well under the 1 s the issue allows on a quiet machine; generous here for a loaded one.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(kept.ws.closeCode).toBeUndefined();
    expect(kept.s.ended).toBe(false);
    expect(t.app.gate.streams.size).toBeGreaterThanOrEqual(3);
  });

  test('rotating the token ends streams opened with the old secret', async () => {
    const tok = await tokenFor();
    const streams = await openStreams(t.origin, tok.secret);
    const res = await t.http.post('/platform/tokens/rotate', { token_id: tok.id }, { token: tok.org.userToken });
    expect(res.status, res.text).toBe(200);
    await expectEnded(streams, 'invalid_token', 4401);
  });

  test('a token that expires ends its streams at expiry', async () => {
    const tok = await tokenFor({ expires_at: new Date(t.clock.now().getTime() + 1500).toISOString() });
    const streams = await openStreams(t.origin, tok.secret);
    expect(streams.ws.closeCode).toBeUndefined();
    await expectEnded(streams, 'invalid_token', 4401);
  });

  test('engaging the kill switch ends every stream (developer_access_paused, close 4503)', async () => {
    const tok = await tokenFor();
    const streams = await openStreams(t.origin, tok.secret);
    try {
      const res = await t.http.post('/operator/kill_switch', { engaged: true }, { token: t.operatorToken });
      expect(res.status, res.text).toBe(200);
      await expectEnded(streams, 'developer_access_paused', 4503);
    } finally {
      await t.http.post('/operator/kill_switch', { engaged: false }, { token: t.operatorToken });
    }
  });

  test.skipIf(!onPostgres())('a revoke on process A ends the streams open on process B', async () => {
    const B = b!;
    const tok = await tokenFor();
    const streams = await openStreams(B.origin, tok.secret, B.app);
    const res = await t.http.post('/platform/tokens/revoke', { token_id: tok.id }, { token: tok.org.userToken });
    expect(res.status, res.text).toBe(200);
    await expectEnded(streams, 'invalid_token', 4401);
  });

  test.skipIf(!onPostgres())('the kill switch engaged through process A ends the streams open on process B', async () => {
    const B = b!;
    const tok = await tokenFor();
    const streams = await openStreams(B.origin, tok.secret, B.app);
    try {
      await t.http.post('/operator/kill_switch', { engaged: true }, { token: t.operatorToken });
      await expectEnded(streams, 'developer_access_paused', 4503);
    } finally {
      await t.http.post('/operator/kill_switch', { engaged: false }, { token: t.operatorToken });
    }
  });

  test('a stream that ends on its own stops being watched', async () => {
    const tok = await tokenFor();
    const before = t.app.gate.streams.size;
    const s = sse(t.origin, tok.secret);
    await waitUntil(() => t.app.gate.streams.size === before + 1, 'the stream to be watched');
    await withTimeout(s.close(), 5_000, 'the SSE stream to close');
    await waitUntil(() => t.app.gate.streams.size === before, 'the watch to be released');
  });
});
