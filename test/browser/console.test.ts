import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import { beforeAll, describe, expect } from 'vitest';
import type { Page } from 'playwright-core';
import { createEndpoint, startReceiver, webhookConfig, type Receiver } from '../webhook/receiver.ts';
import { ALL_SCOPES, activeEnrollment, expectStatus, setup } from '../assertion/helpers.ts';
import { api, ALL_SCOPES as CLAIM_SCOPES } from '../assertion/helpers.ts';
import { ALL_SCOPES as OPS_SCOPES, launch, tenant as opsTenant, sandbox, topUp } from '../operation/helpers.ts';
import { runsBrowser, offlinePage, useBrowser } from '../support/browser.ts';
import { appTest, buildTenant, buildToken, emitEvent, feedEvents, rawRequest, type TestApp } from '../support/kit.ts';

// One attempt per delivery: a failing one is exhausted at once, and a retry is one more attempt.
const test = appTest({ config: webhookConfig({ retryScheduleMs: [0] }) });

// Failed deliveries wait (on the fake clock) for a second attempt: a replay stays live until canceled.
const waiting = appTest({ config: webhookConfig({ retryScheduleMs: [0, 60_000] }) });

// The console as its sources are now (npm install builds it; an edit since would otherwise test the old modules).
beforeAll(() => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', new URL('../../packages/console', import.meta.url).pathname], { stdio: 'inherit' });
}, 60_000);

test('GET /console serves the page and its modules from this server with a strict CSP, ETags and 304s; other paths stay 404', async ({
  app,
}) => {
  const page = await fetch(`${app.origin}/console`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const csp = page.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe'); // no inline script or style, no eval
  const etag = page.headers.get('etag');
  expect(etag).toMatch(/^"[0-9a-f]{20}(-br|-gz)?"$/); // one per encoding (src/http/static-asset.ts)
  expect(page.headers.get('cache-control')).toBe('no-cache');
  // fetch would add `Cache-Control: no-cache` beside If-None-Match (a reload); a browser's revalidation does not.
  const again = await rawRequest(app.origin, 'GET', '/console', { 'if-none-match': etag!, 'accept-encoding': 'gzip, deflate, br' });
  expect(again.status).toBe(304);
  expect(again.text).toBe('');

  const html = await page.text();
  const refs = [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]!);
  expect(refs).toEqual(['/console/console.css', '/console/main.js']);
  const main = await fetch(`${app.origin}/console/main.js`);
  expect(main.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  // Every module the entry imports, transitively, is served.
  const seen = new Set<string>();
  const walk = async (path: string): Promise<void> => {
    if (seen.has(path)) return;
    seen.add(path);
    const res = await fetch(`${app.origin}${path}`);
    expect(res.status, path).toBe(200);
    for (const m of (await res.text()).matchAll(/from ["'](\.{1,2}\/[^"']+)["']/g)) await walk(new URL(m[1]!, `http://x${path}`).pathname);
  };
  await walk('/console/main.js');
  expect(seen.size).toBeGreaterThan(8);
  for (const path of [
    '/console/',
    '/console/index.html',
    '/console/../package.json',
    '/console/main.ts',
    '/console/schema.d.ts',
    '/consolex',
  ]) {
    expect((await fetch(`${app.origin}${path}`)).status, path).toBe(404);
  }
});

/** Signs `page` in with `token` by keyboard only. */
async function signIn(page: Page, token: string): Promise<void> {
  await page.locator('#token').focus();
  await page.keyboard.insertText(token);
  await page.keyboard.press('Enter');
}

/**
 * The view now open is readable on a phone and on a laptop: at 390 px nothing is wider than the screen (wide
 * tables scroll inside their box); at 1280 px every table is whole (none scrolls sideways in its box).
 */
async function readable(page: Page, view: string): Promise<void> {
  await page.setViewportSize({ width: 390, height: 800 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${view} at 390 px`).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1280, height: 800 });
  const cut = await page.evaluate(() =>
    [...document.querySelectorAll('main .scroll')].filter((b) => b.scrollWidth > b.clientWidth).map((b) => b.textContent?.slice(0, 60)),
  );
  expect(cut, `${view} at 1280 px`).toEqual([]);
}

const rowOf = (page: Page, text: string) => page.locator('.feed-list tr', { hasText: text });

describe.skipIf(!runsBrowser)('the console in a real browser', () => {
  const browser = useBrowser();
  let t: TestApp;
  let rx: Receiver;

  test('sign in, the live feed, an event`s deliveries and a retry, an operation reaching its end, and a revoked token signing the console out', {
    timeout: 120_000,
  }, async ({ app }) => {
    t = app;
    rx = await startReceiver();
    rx.on('/down', (_req, res) => {
      res.statusCode = 500;
      res.end('receiver down');
    });
    const { org, token, tokenId } = await buildTenant(t, ['events:read', 'webhooks:read', 'webhooks:write']);
    await createEndpoint(t, token, { url: rx.url('/down'), enabled_events: ['assertion.created'] });
    const first = await emitEvent(t, org.id, 'payout.created', { amount: 1 });
    const sockets: Duplex[] = []; // the graphql-ws connections, to drop them
    t.app.server.on('upgrade', (_req, socket: Duplex) => sockets.push(socket));

    const { page, elsewhere, errors, consoleErrors } = await offlinePage(browser(), t.origin);
    expect((await page.goto(`${t.origin}/console`))?.status()).toBe(200);
    await page.locator('#token').waitFor();

    // A bad token: what it means, the API's code and request id, and no sign-in.
    await signIn(page, 'sk_platform_live_nope');
    await expect.poll(() => page.locator('.error-code').textContent()).toBe('invalid_token');
    expect(await page.locator('.error-meaning').textContent()).toBe('This token was not accepted (wrong, revoked or expired).');
    await expect.poll(() => page.locator('.request-id').textContent()).toMatch(/^req_/);

    // Sign in: the token's kind and scopes, and what is hidden for lack of a scope or credential.
    await page.locator('#token').fill('');
    await signIn(page, token);
    await page.locator('.feed-state.live').waitFor();
    expect(await page.locator('.signed-in').textContent()).toContain(`Platform token · ${org.slug} · 4 scopes`);
    const hidden = await page.locator('.hidden-views').textContent();
    expect(hidden).toContain('Entities (needs scope entities:read)');
    expect(hidden).toContain('Tokens (sign in with the dashboard user token)');
    expect(await page.locator('nav a').allTextContents()).toEqual(['Live feed', 'Webhook endpoints', 'Operations', 'Sign in']);
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).toContain(token);
    expect(page.url()).not.toContain(token);

    // The feed from seq 0: the replayed event, then an assertion as it commits, in seq order.
    await page.locator('input[name=after]').fill('0');
    await page.locator('form.filters button[type=submit]').click();
    await rowOf(page, first).or(rowOf(page, 'payout.created')).waitFor();
    const created = await t.http.post(
      '/v1/platform/assertions',
      { external_user_id: 'user_console', issuer: 'https://id.example.com', key: 'kyc_passed' },
      { token: (await buildToken(t, org, ['assertions:write'])).secret },
    );
    expect(created.status, created.text).toBe(201);
    await rowOf(page, 'assertion.created').waitFor();
    expect(await page.locator('.feed-list tbody tr td:first-child').allTextContents()).toEqual(['2', '1']);

    // Paused, arrivals are counted; resumed, they show.
    await page.locator('button.pause').click();
    await emitEvent(t, org.id, 'payout.settled');
    await expect.poll(() => page.locator('button.pause').textContent()).toBe('Resume (1 new)');
    expect(await rowOf(page, 'payout.settled').count()).toBe(0);
    await page.locator('button.pause').click();
    await rowOf(page, 'payout.settled').waitFor();

    // The connection drops: the feed reconnects and subscribes after the last seq it received, so an event
    // committed meanwhile shows once and nothing repeats.
    const opened = sockets.length;
    for (const socket of sockets) socket.destroy();
    await emitEvent(t, org.id, 'payout.failed');
    await rowOf(page, 'payout.failed').waitFor();
    expect(sockets.length).toBeGreaterThan(opened);
    expect(await page.locator('.feed-list tbody tr td:first-child').allTextContents()).toEqual(['4', '3', '2', '1']);

    // Its detail by keyboard: the JSON and its delivery to the failing endpoint; a retry adds an attempt.
    await rowOf(page, 'assertion.created').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.feed-detail pre').textContent()).toContain('"kyc_passed"');
    const delivery = page.locator('.feed-detail .delivery');
    await expect.poll(() => delivery.getAttribute('data-status')).toBe('EXHAUSTED');
    expect(await delivery.locator('tbody tr').count()).toBe(1);
    expect(await delivery.locator('tbody').textContent()).toContain('receiver down');
    await delivery.locator('button.retry').click();
    // The worker sends the retry and the panel reads the log again every 500 ms: more than a poll's default second on a busy machine.
    await expect.poll(() => delivery.locator('tbody tr').count(), { timeout: 10_000 }).toBe(2);
    expect(rx.for('/down')).toHaveLength(2);

    await readable(page, 'feed, an event open');

    // The type filter is a picker of the public event types.
    await page.locator('select[name=type]').selectOption('payout.failed');
    await page.locator('form.filters button[type=submit]').click();
    await expect.poll(() => page.locator('.feed-list tbody tr td:first-child').allTextContents()).toEqual(['4']);

    // A distribution's launch, watched live in a second tab to its terminal status.
    const ops = await opsTenant(t);
    await topUp(t, ops.brand, 1000);
    const launched = await launch(t, ops, { budget: 100, deployments: [{ provider: 'sandbox', config: {} }] });
    const tab = await offlinePage(browser(), t.origin);
    await tab.page.goto(`${t.origin}/console#/signin`);
    await signIn(tab.page, ops.token);
    await tab.page.locator('.feed-state.live').waitFor();
    await tab.page.goto(`${t.origin}/console#/operations/${launched.operation.id}`);
    await expect.poll(() => tab.page.locator('.op-status').textContent(), { timeout: 30_000 }).toBe('SUCCEEDED');
    expect(await tab.page.locator('dl').textContent()).toContain('distribution.launch');
    await tab.page.locator('table', { hasText: 'deployment.provision' }).waitFor(); // its child
    await tab.page.goto(`${t.origin}/console#/operations`);
    await expect.poll(() => tab.page.locator(`main tr[data-id="${launched.operation.id}"]`).textContent()).toContain('SUCCEEDED');

    // The second tab signs in with the organization's user token and revokes the first tab's token: the first signs out.
    await tab.page.goto(`${t.origin}/console#/signin`);
    await signIn(tab.page, org.userToken);
    await tab.page.locator('main h2', { hasText: 'Platform tokens' }).waitFor();
    const form = tab.page.locator('form[aria-label="New token"]');
    await form.locator('input[name=name]').fill('ci reader');
    await form.locator('input[name=scopes]').fill('events:read');
    await form.locator('button').click();
    await expect.poll(() => tab.page.locator('.secret-value').textContent()).toMatch(/^sk_platform_live_/);
    await tab.page.locator('main tbody tr', { hasText: 'ci reader' }).waitFor();
    await tab.page.locator(`tr[data-id="${tokenId}"] button.revoke`).click();
    await expect.poll(() => tab.page.locator(`tr[data-id="${tokenId}"]`).textContent()).toContain('revoked');
    await page.locator('.signed-out').waitFor();
    expect(await page.locator('.signed-out .error-code').textContent()).toBe('invalid_token');
    expect(await page.locator('.signed-out .error-meaning').textContent()).toContain('not accepted (wrong, revoked or expired)');
    expect(await page.evaluate(() => sessionStorage.getItem('console.platform'))).toBeNull();

    for (const p of [page, tab.page]) await p.close();
    await rx.close();
    expect([...elsewhere, ...tab.elsewhere]).toEqual([]);
    expect([...errors, ...tab.errors]).toEqual([]);
    expect([...consoleErrors, ...tab.consoleErrors].filter((e) => /Content Security Policy|Refused/.test(e))).toEqual([]);
  });

  test('a feed opens on its history and subscribes after the head: dropped before any new event, it resumes there, each event once in seq order', {
    timeout: 60_000,
  }, async ({ app }) => {
    const { org, token } = await buildTenant(app, ['events:read']);
    await emitEvent(app, org.id, 'payout.created'); // seq 1, before the visit: shown as history
    // While `down`, every WebSocket upgrade is cut: the console retries and is refused until it is up again.
    let down = false;
    let refused = 0;
    const sockets: Duplex[] = [];
    const upgrade = (_req: unknown, socket: Duplex) => {
      if (!down) return void sockets.push(socket);
      refused++;
      socket.destroy();
    };
    app.app.server.on('upgrade', upgrade);

    const { page, elsewhere, errors } = await offlinePage(browser(), app.origin);
    await page.goto(`${app.origin}/console#/signin`);
    await signIn(page, token);
    await page.locator('.feed-state.live').waitFor();
    await expect.poll(() => page.locator('.feed-list tbody tr td:first-child').allTextContents()).toEqual(['1']);

    down = true;
    for (const socket of sockets) socket.destroy();
    await expect.poll(() => refused, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await page.locator('.feed-state').textContent()).toBe('reconnecting');
    for (const type of ['payout.created', 'payout.settled', 'payout.failed']) await emitEvent(app, org.id, type);
    down = false;

    // The next attempt comes after the console's backoff (up to 2 s here).
    await expect
      .poll(() => page.locator('.feed-list tbody tr td:first-child').allTextContents(), { timeout: 10_000 })
      .toEqual(['4', '3', '2', '1']);
    await page.locator('.feed-state.live').waitFor();
    // What this token may not see is named, in the navigation and in the event's detail.
    expect(await page.locator('.hidden-views').textContent()).toContain('Webhook endpoints (needs scope webhooks:read)');
    await rowOf(page, 'payout.failed').click();
    await page.locator('.feed-detail', { hasText: 'Hidden: needs scope webhooks:read.' }).waitFor();
    await emitEvent(app, org.id, 'payout.created'); // and it goes on live
    await expect.poll(() => page.locator('.feed-list tbody tr td:first-child').allTextContents()).toEqual(['5', '4', '3', '2', '1']);

    app.app.server.off('upgrade', upgrade);
    await page.close();
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
  });

  test('every visit shows the feed`s history: back to the feed, and a later visit in a new tab; a paused organization says paused', {
    timeout: 60_000,
  }, async ({ app }) => {
    const { org, token } = await buildTenant(app, ['events:read', 'webhooks:read']);
    for (const type of ['payout.created', 'payout.settled', 'payout.failed']) await emitEvent(app, org.id, type);
    const seqs = (page: Page) => page.locator('.feed-list tbody tr td:first-child').allTextContents();

    const first = await offlinePage(browser(), app.origin);
    await first.page.goto(`${app.origin}/console#/signin`);
    await signIn(first.page, token);
    await first.page.locator('.feed-state.live').waitFor();
    await expect.poll(() => seqs(first.page)).toEqual(['3', '2', '1']);
    await emitEvent(app, org.id, 'payout.created'); // live, after the history
    await expect.poll(() => seqs(first.page)).toEqual(['4', '3', '2', '1']);
    // Away to another view and back: the feed opens on its history again.
    await first.page.locator('nav a', { hasText: 'Webhook endpoints' }).click();
    await first.page.locator('main h2', { hasText: 'Webhook endpoints' }).waitFor();
    await first.page.locator('nav a', { hasText: 'Live feed' }).click();
    await first.page.locator('.feed-state.live').waitFor();
    await expect.poll(() => seqs(first.page)).toEqual(['4', '3', '2', '1']);
    await first.page.close();

    // A later visit: a new tab signs in again and sees every event so far, then the next one live.
    const later = await offlinePage(browser(), app.origin);
    await later.page.goto(`${app.origin}/console`);
    await signIn(later.page, token);
    await later.page.locator('.feed-state.live').waitFor();
    await expect.poll(() => seqs(later.page)).toEqual(['4', '3', '2', '1']);
    await emitEvent(app, org.id, 'payout.settled');
    await expect.poll(() => seqs(later.page)).toEqual(['5', '4', '3', '2', '1']);

    // The kill switch engaged: signing in says developer access is paused (the token is fine), not that it is wrong.
    const engage = (engaged: boolean) => app.http.post('/operator/kill_switch', { engaged }, { token: app.operatorToken });
    expect((await engage(true)).status).toBe(200);
    try {
      await later.page.goto(`${app.origin}/console#/signin`);
      await later.page.locator('button.sign-out').click();
      await signIn(later.page, token);
      await expect.poll(() => later.page.locator('main .error-code').textContent()).toBe('developer_access_paused');
      expect(await later.page.locator('main .error-meaning').textContent()).toMatch(/^Developer access is paused/);
    } finally {
      expect((await engage(false)).status).toBe(200);
    }
    await later.page.close();
    expect([...first.elsewhere, ...later.elsewhere]).toEqual([]);
    expect([...first.errors, ...later.errors]).toEqual([]);
  });

  test('every view readable at 390 px and 1280 px: the feed`s brand and subject filters and an event`s operation, an endpoint`s delivery log, update and copied secret, a launch waiting for funds canceled from its page, entities, a token rotated, the operator', {
    timeout: 120_000,
  }, async ({ app }) => {
    const scopes = [...new Set([...OPS_SCOPES, ...CLAIM_SCOPES, 'webhooks:read', 'webhooks:write', 'entities:read'])];
    const { org, token } = await buildTenant(app, scopes, { brands: ['north', 'south'] });
    const [north, south] = [org.brands[0]!, org.brands[1]!];
    const rx = await startReceiver();
    rx.on('/down', (_req, res) => {
      res.statusCode = 500;
      res.end('receiver down');
    });
    const endpoint = await createEndpoint(app, token, { url: rx.url('/down'), enabled_events: ['payout.settled'] });
    const southern = await app.http.post(
      '/operator/events',
      { organization_id: org.id, brand: south.id, type: 'payout.settled', subject: { type: 'payout', id: 'po_south' }, data: {} },
      { token: app.operatorToken },
    );
    expect(southern.status, southern.text).toBe(201);
    await emitEvent(app, org.id, 'payout.created'); // organization-level, about ent_1
    // No money in the wallet: the launch waits for funds.
    const { operation, distribution } = await launch(
      app,
      { token, brand: north.id, orgId: org.id },
      { budget: 100, deployments: [sandbox()] },
    );
    const { enrollment } = await activeEnrollment(api(app, token));
    const caused = (await feedEvents(app, token, `subject_id=${distribution.id}`)).find((e) => e.operation === operation.id);
    expect(caused).toBeDefined();

    const { page, elsewhere, errors } = await offlinePage(browser(), app.origin);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.origin });
    await page.goto(`${app.origin}/console#/signin`);
    await readable(page, 'sign in');
    await signIn(page, token);
    await page.locator('.feed-state.live').waitFor();

    // The feed's brand filter, then its subject filters; an event's operation opens the operation's page.
    const filters = page.locator('form.filters');
    const seqs = () => page.locator('.feed-list tbody tr td:first-child').allTextContents();
    const seqOf = async (id: string) => String((await app.http.get(`/v1/platform/events/${id}`, { token })).body.seq);
    await filters.locator('input[name=after]').fill('0');
    await filters.locator('select[name=brand]').selectOption(south.id);
    await filters.locator('button[type=submit]').click();
    await expect.poll(seqs).toEqual([await seqOf(southern.body.id)]);
    await filters.locator('select[name=brand]').selectOption('');
    await filters.locator('input[name=subjectType]').fill('distribution');
    await filters.locator('input[name=subjectId]').fill(distribution.id);
    await filters.locator('button[type=submit]').click();
    await rowOf(page, caused.type).first().waitFor();
    expect(await page.locator('.feed-list tbody').textContent()).not.toContain('payout.');
    await page.locator(`.feed-list tr[data-id="${caused.id}"]`).click();
    await expect.poll(() => page.locator('.feed-detail pre').textContent()).toContain(distribution.id);
    await readable(page, 'feed, an event open');
    await page.locator('.feed-detail dd a', { hasText: operation.id }).click();

    // The launch, waiting for funds, canceled from its page: the cancel shows as targeting it.
    await expect.poll(() => page.locator('.op-status').textContent()).toBe('WAITING (FUNDING_REQUIRED)');
    await readable(page, 'operation');
    await page.goto(`${app.origin}/console#/operations`);
    await expect.poll(() => page.locator(`main tr[data-id="${operation.id}"]`).textContent()).toContain('WAITINGFUNDING_REQUIRED');
    await page.goto(`${app.origin}/console#/operations/${operation.id}`);
    await page.locator('button', { hasText: 'Cancel distribution' }).click();
    await expect.poll(() => page.locator('.notice a').textContent()).toMatch(/^op_/);
    await expect.poll(() => page.locator('.op-status').textContent(), { timeout: 30_000 }).toBe('CANCELED');
    await expect.poll(() => page.locator('table', { hasText: 'distribution.cancel' }).count()).toBe(1);
    await readable(page, 'operation, canceled');
    await page.goto(`${app.origin}/console#/operations`);
    await expect.poll(() => page.locator(`main tr[data-id="${operation.id}"]`).textContent()).toContain('CANCELED');
    await readable(page, 'operations');

    // An endpoint: its list, its delivery log with the failed attempt, an update, a rotated secret copied.
    await page.goto(`${app.origin}/console#/webhooks`);
    await page.locator(`main tr[data-id="${endpoint.id}"]`).waitFor();
    await readable(page, 'webhook endpoints');
    await page.locator(`main tr[data-id="${endpoint.id}"] a`).click();
    const delivery = page.locator('.deliveries .delivery');
    await expect.poll(() => delivery.getAttribute('data-status')).toBe('EXHAUSTED');
    expect(await delivery.locator('tbody').textContent()).toContain('receiver down');
    expect(await delivery.locator('tbody td').nth(1).textContent()).toBe('500');
    const update = page.locator('form[aria-label="Update endpoint"]');
    await update.locator('input[name=description]').fill('Edited on a phone');
    await update.locator('button').click();
    await expect
      .poll(async () => (await app.http.get(`/v1/platform/webhook_endpoints/${endpoint.id}`, { token })).body.webhook_endpoint.description)
      .toBe('Edited on a phone');
    await page.locator('button', { hasText: 'Rotate secret' }).click();
    const secret = page.locator('.notice.secret');
    await expect.poll(() => secret.locator('.secret-value').textContent()).toMatch(/^whsec_/);
    await secret.locator('button', { hasText: 'Copy' }).click();
    await expect.poll(() => secret.locator('[role=status]').textContent()).toBe('Copied.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await secret.locator('.secret-value').textContent());
    await readable(page, 'endpoint');

    await page.goto(`${app.origin}/console#/entities`);
    await page.locator('button.enrollment').click();
    await expect.poll(() => page.locator('main h3', { hasText: 'Enrollment' }).textContent()).toContain(enrollment.id);
    await readable(page, 'entities, an enrollment open');

    // Tokens: one created, then rotated (its new secret once).
    await page.goto(`${app.origin}/console#/signin`);
    await signIn(page, org.userToken);
    await page.locator('main h2', { hasText: 'Platform tokens' }).waitFor();
    const create = page.locator('form[aria-label="New token"]');
    await create.locator('input[name=name]').fill('phone');
    await create.locator('input[name=scopes]').fill('events:read');
    await create.locator('button').click();
    const created = await page.locator('.secret-value').textContent();
    expect(created).toMatch(/^sk_platform_live_/);
    await page.locator('main tbody tr', { hasText: 'phone' }).locator('button.rotate').click();
    await expect.poll(() => page.locator('.notice.secret strong').textContent()).toContain('Rotated phone');
    expect(await page.locator('.secret-value').textContent()).not.toBe(created);
    // The outcome has the focus: the button that was clicked is gone with the refreshed table.
    await expect.poll(() => page.evaluate(() => document.activeElement?.className)).toBe('outcome');
    // A publishable key for a brand: the kind takes a brand instead of scopes, and the list says which.
    await create.locator('input[name=name]').fill('shop site');
    await create.locator('select[name=kind]').selectOption('publishable');
    expect(await create.locator('input[name=scopes]').isDisabled()).toBe(true);
    await create.locator('input[name=brand]').fill(north.id);
    await create.locator('button').click();
    await expect.poll(() => page.locator('.secret-value').textContent()).toMatch(/^pk_live_/);
    const shop = page.locator('main tbody tr', { hasText: 'shop site' });
    await expect.poll(() => shop.locator('.kind code').textContent()).toBe(north.id);
    expect(await shop.locator('.kind').textContent()).toMatch(/^publishable/);
    expect(await page.locator('main tbody tr', { hasText: 'phone' }).locator('.kind').allTextContents()).toEqual(['secret', 'secret']);
    await shop.locator('button.revoke').click();
    await expect.poll(() => page.locator('.outcome .notice').textContent()).toContain('Revoked shop site');
    expect(await page.evaluate(() => document.activeElement?.className)).toBe('outcome');
    await expect.poll(() => shop.textContent()).toContain('revoked');
    await readable(page, 'tokens');

    await page.goto(`${app.origin}/console#/signin`);
    await signIn(page, app.operatorToken);
    await page.locator('main tbody tr', { hasText: org.slug }).waitFor();
    await readable(page, 'operator');

    await page.close();
    await rx.close();
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
  });

  test('webhook endpoints (create with the secret once, rotate, replay, disable), entities, and the operator views', {
    timeout: 90_000,
  }, async ({ app }) => {
    const { org, token } = await buildTenant(app, ['webhooks:read', 'webhooks:write', 'entities:read', 'assertions:write']);
    const { page, elsewhere, errors } = await offlinePage(browser(), app.origin);
    await page.goto(`${app.origin}/console#/signin`);
    await signIn(page, token);
    await page.locator('main h2', { hasText: 'Webhook endpoints' }).waitFor(); // the first view the token opens
    await page.locator('main .empty', { hasText: 'No webhook endpoints yet.' }).waitFor();
    expect(await page.locator('.hidden-views').textContent()).toContain('Live feed (needs scope events:read)');

    // Refused input: the API's code and request id.
    const create = page.locator('form[aria-label="New endpoint"]');
    await create.locator('input[name=url]').fill('http://example.com/hook');
    await create.locator('button').click();
    await expect.poll(() => page.locator('.error-code').textContent()).toBe('invalid_request');
    expect(await page.locator('.request-id').textContent()).toMatch(/^req_/);
    await create.locator('input[name=url]').fill('https://example.com/hook');
    await create.locator('input[name=description]').fill('Receiver');
    await create.locator('button').click();
    await expect.poll(() => page.locator('.secret-value').textContent()).toMatch(/^whsec_/);
    const row = page.locator('main tbody tr', { hasText: 'https://example.com/hook' });
    await expect.poll(() => row.textContent()).toContain('ENABLED');

    await row.click();
    await page.locator('main h2', { hasText: 'Endpoint' }).waitFor();
    await page.locator('button', { hasText: 'Rotate secret' }).click();
    await expect.poll(() => page.locator('.secret-value').textContent()).toMatch(/^whsec_/);
    await page.locator('form[aria-label="Replay a range"] input[name=after]').fill('0');
    await page.locator('form[aria-label="Replay a range"] button').click();
    await expect.poll(() => page.locator('.notice a').textContent()).toMatch(/^op_/);
    await page.locator('button', { hasText: 'Disable' }).click();
    await expect.poll(() => page.locator('main dl').textContent()).toContain('DISABLED (MANUAL)');
    await readable(page, 'endpoint');

    // Health live: an endpoint the server disables (its receiver answers 410) shows it in the open view.
    const rx = await startReceiver();
    rx.on('/gone', (_req, res) => {
      res.statusCode = 410;
      res.end();
    });
    const gone = await createEndpoint(app, token, { url: rx.url('/gone') });
    await page.goto(`${app.origin}/console#/webhooks/${gone.id}`);
    await page.locator('.health-state.live').waitFor();
    await expect.poll(() => page.locator('main dl').textContent()).toContain('ENABLED');
    await emitEvent(app, org.id, 'payout.created');
    await expect.poll(() => page.locator('main dl').textContent()).toContain('DISABLED (GONE)');
    await rx.close();

    const claim = await app.http.post(
      '/v1/platform/assertions',
      { external_user_id: 'u1', issuer: 'https://id.example.com', key: 'kyc_passed' },
      { token },
    );
    expect(claim.status, claim.text).toBe(201);
    await page.goto(`${app.origin}/console#/entities`);
    await expect.poll(() => page.locator('main tbody').textContent()).toContain('https://id.example.com:u1');
    expect(await page.locator('main tbody').textContent()).toContain('kyc_passed');

    // The operator: organizations, a wallet top-up, and the kill switch only after a confirmation.
    await page.goto(`${app.origin}/console#/signin`);
    await signIn(page, app.operatorToken);
    await page.locator('main h2', { hasText: 'Operator' }).waitFor();
    await page.locator('main tbody tr', { hasText: org.slug }).waitFor();
    await page.locator('input[name=brand]').fill(org.brands[0]!.id);
    await page.locator('input[name=amount]').fill('500');
    await page.locator('form[aria-label="Wallet top-up"] button').click();
    await expect.poll(() => page.locator('.notice').textContent()).toContain('balance 500');
    await page.locator('button', { hasText: 'Engage…' }).click();
    expect((await app.http.get('/operator/kill_switch', { token: app.operatorToken })).body.engaged).toBe(false);
    await page.locator('button.confirm').click();
    await expect.poll(() => page.locator('.kill-state strong').textContent()).toBe('engaged');
    await page.locator('button', { hasText: 'Disengage…' }).click();
    await page.locator('button.confirm').click();
    await expect.poll(() => page.locator('.kill-state strong').textContent()).toBe('off');
    expect((await app.http.get('/operator/kill_switch', { token: app.operatorToken })).body.engaged).toBe(false);
    // By keyboard: the confirmation takes the focus on Cancel (Escape cancels); the focus comes back to the switch.
    const focused = () => page.evaluate(() => document.activeElement?.textContent);
    await page.locator('button', { hasText: 'Engage…' }).focus();
    await page.keyboard.press('Enter');
    expect(await focused()).toBe('Cancel');
    await page.keyboard.press('Escape');
    expect(await focused()).toBe('Engage…');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('Yes, engage');
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('Disengage…');
    expect(await page.locator('.kill-state strong').textContent()).toBe('engaged');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.kill-state strong').textContent()).toBe('off');
    expect((await app.http.get('/operator/kill_switch', { token: app.operatorToken })).body.engaged).toBe(false);
    await readable(page, 'operator');

    await page.close();
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
  });

  waiting(
    'a live replay canceled from its operation page; an enrollment`s standing and evaluation',
    { timeout: 60_000 },
    async ({ app }) => {
      const { org, token } = await buildTenant(app, ['webhooks:read', 'webhooks:write']);
      const rx = await startReceiver();
      rx.on('/fail', (_req, res) => {
        res.statusCode = 503;
        res.end();
      });
      const endpoint = await createEndpoint(app, token, { url: rx.url('/fail') });
      await emitEvent(app, org.id, 'payout.created');
      const replay = await app.http.post(`/v1/platform/webhook_endpoints/${endpoint.id}/replay`, { starting_after: 0 }, { token });
      expect(replay.status, replay.text).toBe(202);

      const { page, elsewhere, errors } = await offlinePage(browser(), app.origin);
      await page.goto(`${app.origin}/console#/signin`);
      await signIn(page, token);
      await page.locator('main h2', { hasText: 'Webhook endpoints' }).waitFor();
      await page.goto(`${app.origin}/console#/operations/${replay.body.operation.id}`);
      await page.locator('button', { hasText: 'Cancel replay' }).click();
      await expect.poll(() => page.locator('.notice a').textContent()).toMatch(/^op_/);
      await expect.poll(() => page.locator('.op-status').textContent()).toBe('CANCELED');
      expect(await page.locator('button', { hasText: 'Cancel replay' }).count()).toBe(0);

      // An enrollment's standing and the evaluation that produced it: qualified by an assertion.
      const member = await setup(app, [...ALL_SCOPES, 'entities:read']);
      const { enrollment, subject } = await activeEnrollment(member.api);
      expectStatus(await member.api.assert({ ...subject, key: 'verified', value: true }), 201);
      await page.goto(`${app.origin}/console#/signin`);
      await signIn(page, member.token);
      await page.locator('.feed-state.live').waitFor();
      await page.goto(`${app.origin}/console#/entities`);
      await page.locator('button.enrollment', { hasText: 'QUALIFIED' }).click();
      await expect.poll(() => page.locator('main h3', { hasText: 'Enrollment' }).textContent()).toContain(enrollment.id);
      expect(await page.locator('section[aria-label=Enrollment] dl').textContent()).toContain('StandingQUALIFIED');
      const evaluation = await page.locator('section[aria-label=Enrollment] pre').textContent();
      expect(evaluation).toContain('"trigger": "assertion"');
      expect(evaluation).toContain('assert:verified');

      await page.close();
      await rx.close();
      expect(elsewhere).toEqual([]);
      expect(errors).toEqual([]);
    },
  );
});
