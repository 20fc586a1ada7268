import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, expect } from 'vitest';
import { loadConfig, type WebhookConfig } from '../../src/config.ts';
import { appendEvent } from '../../src/domain/event/event.ts';
import { appTest, type TestApp, type TestOrg } from '../support/kit.ts';

/** A real webhook receiver on 127.0.0.1 (port 0). Each path can answer its own way. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

type Behaviour = (req: IncomingMessage, res: ServerResponse) => void;

export interface Receiver {
  url(path?: string): string;
  received: Received[];
  /** TCP connections accepted so far (a refused destination must never open one). */
  connections(): number;
  /** How `path` answers from now on (default 200 `ok`). */
  on(path: string, behaviour: Behaviour): void;
  for(path: string): Received[];
  waitFor(n: number, path?: string, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const behaviours = new Map<string, Behaviour>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString(), at: Date.now() });
      const b = behaviours.get(req.url!);
      if (b) b(req, res);
      else res.end('ok');
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const forPath = (path?: string) => (path ? received.filter((r) => r.path === path) : received);
  return {
    url: (path = '/') => `http://127.0.0.1:${port}${path}`,
    received,
    connections: () => connections,
    on: (path, b) => behaviours.set(path, b),
    for: forPath,
    async waitFor(n, path, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (forPath(path).length < n) {
        if (Date.now() > until) throw new Error(`expected ${n} requests on ${path ?? 'any path'}, got ${forPath(path).length}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return forPath(path);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Webhook configuration for tests: defaults with a short schedule and fast
 * polling. Loopback delivery is on explicitly: the receivers listen on
 * 127.0.0.1, and the default is off when the server runs on PostgreSQL.
 */
export function webhookConfig(over: Partial<WebhookConfig> = {}): { webhook: WebhookConfig } {
  const base = loadConfig({}).webhook;
  return {
    webhook: { ...base, retryScheduleMs: [0, 1000, 5000], timeoutMs: 2000, leaseMs: 5000, pollMs: 20, allowLoopback: true, ...over },
  };
}

/**
 * A delivery test file's server (configured by `webhookConfig(over)`) and receiver: `ctx.t` and `ctx.rx` are set
 * before the first test, and the receiver is closed after the last.
 */
export function deliveryTest(over: Partial<WebhookConfig> = {}) {
  const test = appTest({ config: webhookConfig(over) });
  const ctx = {} as { t: TestApp; rx: Receiver };
  test.beforeAll(async ({ app }) => {
    ctx.t = app;
    ctx.rx = await startReceiver();
  });
  afterAll(() => ctx.rx?.close());
  return { test, ctx };
}

/** Answers every request with `status` (and `body`). */
export const answering =
  (status: number, body = '') =>
  (_req: IncomingMessage, res: ServerResponse) => {
    res.statusCode = status;
    res.end(body);
  };

export async function createEndpoint(t: TestApp, token: string, body: Record<string, unknown>) {
  const res = await t.http.post('/v1/platform/webhook_endpoints', body, { token });
  expect(res.status, res.text).toBe(201);
  // Events created at the same instant as the endpoint count as after it; step the clock so ordering is unambiguous.
  t.clock.advance(1);
  return res.body.webhook_endpoint as { id: string; secret: string; url: string };
}

export async function listDeliveries(t: TestApp, token: string, endpointId: string, query = '') {
  const res = await t.http.get(`/v1/platform/webhook_endpoints/${endpointId}/deliveries${query}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body.data as any[];
}

/** Runs fan-out and every due attempt to completion (the injected clock decides what is due). */
export const settle = (t: TestApp) => t.app.webhooks.drain();

/** Appends `n` public events in one transaction and sequences them. */
export async function emitMany(t: TestApp, organizationId: string, n: number) {
  const { deps } = t.app;
  await deps.db.transaction(async (tx) => {
    for (let i = 0; i < n; i++)
      await appendEvent(deps, tx, {
        test: true,
        organizationId,
        type: 'assertion.created',
        subject: { type: 'entity', id: 'ent_1' },
        data: { i },
      });
  });
  await t.app.sequencer.flush();
}

/** Answers after `delayMs`, counting the requests open at once. */
export function delayed(delayMs: () => number) {
  const seen = { open: 0, max: 0 };
  return {
    seen,
    behaviour: (_req: unknown, res: { end(b: string): void }) => {
      seen.open++;
      seen.max = Math.max(seen.max, seen.open);
      setTimeout(() => {
        seen.open--;
        res.end('ok');
      }, delayMs());
    },
  };
}

export type { TestOrg };
