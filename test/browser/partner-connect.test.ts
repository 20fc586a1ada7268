import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { runsBrowser, useBrowser } from '../support/browser.ts';
import { appTest, type TestApp } from '../support/kit.ts';
import { buildConnectBrand, hsHandoff } from '../support/connect.ts';

/**
 * Partner connect from a real browser: a test page (served only here, by this file, never by `npm start`) on a second
 * loopback origin runs join → status → connect against the API with its publishable key, through CORS preflights; a
 * page on an origin the brand does not allow is blocked by the browser.
 */
const test = appTest({
  config: { connectRateLimits: { key: { perSecond: 1000, burst: 10_000 }, ip: { perSecond: 1000, burst: 10_000 } } },
});

/** A bare page on its own loopback origin: the flow runs in it through page.evaluate, as a partner site's script would. */
function testPage(): Promise<{ origin: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Partner site</title><p>partner site</p>');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })),
  );
}

/** The partner site's script: join with the handoff, then status and connect with the session header. */
const FLOW = async ({ api, pk, handoff }: { api: string; pk: string; handoff: string }) => {
  const call = async (method: string, path: string, body?: unknown, session?: string) => {
    const headers: Record<string, string> = { authorization: `Bearer ${pk}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (session) headers['connect-session'] = session;
    try {
      const res = await fetch(`${api}/v1/platform/connect/${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    } catch (e) {
      return { blocked: String(e) };
    }
  };
  const joined = await call('POST', 'join', { handoff });
  if (!('status' in joined) || joined.status !== 200) return { joined };
  const session = joined.body.session as string;
  const status = await call('GET', 'status', undefined, session);
  const connected = await call('POST', 'connect', { provider: 'youtube', account_id: 'UC-browser' }, session);
  const after = await call('GET', 'status', undefined, session);
  return { joined, status, connected, after };
};

describe.skipIf(!runsBrowser)('partner connect in a browser', () => {
  const browser = useBrowser();
  let allowed: { origin: string; server: Server };
  let other: { origin: string; server: Server };
  beforeAll(async () => {
    allowed = await testPage();
    other = await testPage();
  });
  afterAll(() => {
    allowed?.server.close();
    other?.server.close();
  });

  test('join → status → connect from an allowed origin, through CORS', async ({ app }) => {
    const t: TestApp = app;
    const b = await buildConnectBrand(t, { origins: [allowed.origin] });
    const page = await browser().newPage();
    try {
      await page.goto(allowed.origin);
      const out: any = await page.evaluate(FLOW, { api: t.origin, pk: b.pk, handoff: await hsHandoff(t, b, { sub: 'browser-user' }) });
      expect(out.joined.status, JSON.stringify(out)).toBe(200);
      expect(out.joined.body.session).toMatch(/^cs_/);
      expect(out.status).toMatchObject({ status: 200, body: { relationship: { status: 'created' }, enrollment: { status: 'pending' } } });
      expect(out.connected).toMatchObject({ status: 201, body: { object: 'connection', provider: 'youtube', account_id: 'UC-browser' } });
      expect(out.after.body.connections).toEqual([expect.objectContaining({ provider: 'youtube', account_id: 'UC-browser' })]);
    } finally {
      await page.close();
    }
  });

  test('an origin the brand does not allow is blocked by the browser, and the handoff is not spent', async ({ app }) => {
    const t: TestApp = app;
    const b = await buildConnectBrand(t, { origins: [allowed.origin] });
    const handoff = await hsHandoff(t, b, { sub: 'blocked-user' });
    const page = await browser().newPage();
    try {
      await page.goto(other.origin);
      const out: any = await page.evaluate(FLOW, { api: t.origin, pk: b.pk, handoff });
      expect(out.joined.blocked, JSON.stringify(out)).toMatch(/TypeError|Failed to fetch/);
      await page.goto(allowed.origin);
      const ok: any = await page.evaluate(FLOW, { api: t.origin, pk: b.pk, handoff });
      expect(ok.joined.status, JSON.stringify(ok)).toBe(200);
    } finally {
      await page.close();
    }
  });
});
