// Writes screenshots of the console's main views to docs/console/ (shown in docs/guides/console.md); not part of npm test.
// Starts the server in this process on a throwaway embedded database (bootstrapped like `npm start`), gives it some
// traffic (a failing and a healthy webhook receiver, events, claims, a qualified enrollment, a distribution launch), then drives Debian's
// Chromium through the console. Run: npm run console:screenshots (needs /usr/bin/chromium, or CHROMIUM_PATH).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchChromium } from '../test/support/browser.ts';

process.env.NODE_ENV ??= 'production';
const { buildApp } = await import('../src/app.ts');
const { loadConfig } = await import('../src/config.ts');

const OUT = new URL('../docs/console/', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'console-shots-'));
const app = await buildApp(loadConfig({ DATA_DIR: join(dir, 'data'), PORT: '0', LOG_LEVEL: 'silent', BOOTSTRAP: '1' }));
await app.start();
const creds = app.credentials!;
const origin = app.urls.api_origin;

const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.statusCode = req.url === '/down' ? 503 : 200;
    res.end(req.url === '/down' ? 'maintenance' : 'ok');
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const hook = (path: string) => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}${path}`;

async function call(path: string, token: string, body?: unknown): Promise<any> {
  const res = await fetch(origin + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const SK = creds.platform_token.secret;
const OP = creds.operator_token;
await call('/v1/platform/webhook_endpoints', SK, { url: hook('/ok'), description: 'Production receiver' });
const down = await call('/v1/platform/webhook_endpoints', SK, {
  url: hook('/down'),
  description: 'Staging (down)',
  enabled_events: ['assertion.created', 'payout.created'],
});
await call('/operator/events', OP, {
  organization_id: creds.organization.id,
  brand: 'second',
  type: 'payout.created',
  subject: { type: 'payout', id: 'po_demo' },
  data: { amount: 1500 },
});
for (const user of ['user_7', 'user_8']) {
  await call('/v1/platform/assertions', SK, { external_user_id: user, issuer: 'https://id.example.com', key: 'kyc_passed' });
}
// An enrollment qualified by a claim, for the entities view.
const program = await call('/v1/platform/programs', SK, { name: 'Creators', grace_period_seconds: 0 });
await call(`/v1/platform/programs/${program.id}/requirements`, SK, { metric: 'assert:verified', operator: 'exists' });
const enrolled = await call('/v1/platform/enrollments', SK, {
  program: program.id,
  external_user_id: 'user_7',
  issuer: 'https://id.example.com',
});
for (const step of ['approve', 'activate']) await call(`/v1/platform/enrollments/${enrolled.id}/${step}`, SK, {});
await call('/v1/platform/assertions', SK, { entity: enrolled.entity, key: 'verified', value: true });
await call(`/operator/brands/${creds.brands[0]!.id}/wallet/top_up`, OP, { amount: 5000 });
const launched = await call('/v1/platform/distributions', SK, {
  name: 'Spring',
  budget: 3000,
  deployments: [
    { provider: 'sandbox', config: { spend: 1200 } },
    { provider: 'sandbox', config: { outcome: 'fail' } },
  ],
});
await call('/platform/tokens/create', creds.user_token, { name: 'ci reader', scopes: ['events:read'] });
await call('/platform/tokens/create', creds.user_token, { name: 'shop site', kind: 'publishable', brand: creds.brands[0]!.id });
for (let i = 0; i < 100; i++) {
  const { operation } = await call(`/v1/platform/operations/${launched.operation.id}`, SK);
  if (operation.completed_at) break;
  await new Promise((r) => setTimeout(r, 100));
}

mkdirSync(OUT, { recursive: true });
const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
const shot = async (name: string) => {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(OUT, `${name}.png`) });
};
const fromStart = async () => {
  await page.locator('.feed-state.live').waitFor();
  await page.locator('input[name=after]').fill('0');
  await page.locator('form.filters button[type=submit]').click();
};
const signIn = async (token: string) => {
  await page.goto(`${origin}/console#/signin`);
  await page.locator('#token').fill(token);
  await page.keyboard.press('Enter');
};

await signIn(SK);
await fromStart();
await page.locator('.feed-list tr', { hasText: 'assertion.created' }).first().click();
await page.locator('.feed-detail .delivery').first().waitFor();
await shot('feed');
await page.goto(`${origin}/console#/webhooks`);
await page.locator('main table').waitFor();
await shot('webhooks');
await page.goto(`${origin}/console#/webhooks/${down.webhook_endpoint.id}`);
await page.locator('.delivery').first().waitFor();
await shot('endpoint');
await page.goto(`${origin}/console#/operations/${launched.operation.id}`);
await page.locator('table', { hasText: 'deployment.provision' }).waitFor();
await shot('operation');
await page.goto(`${origin}/console#/entities`);
await page.locator('button.enrollment', { hasText: 'QUALIFIED' }).click();
await page.locator('section[aria-label=Enrollment] pre').waitFor();
await shot('entities');
await signIn(creds.user_token);
await page.locator('main table').waitFor();
await shot('tokens');
await signIn(OP);
await page.locator('.kill-state').waitFor();
await page.locator('main table').waitFor();
await shot('operator');
await page.setViewportSize({ width: 390, height: 760 });
await page.goto(`${origin}/console#/feed`);
await fromStart();
await page.locator('.feed-list tr', { hasText: 'payout.created' }).waitFor();
await shot('feed-phone');

await browser.close();
receiver.close();
await app.stop();
rmSync(dir, { recursive: true, force: true });
console.log(`wrote ${OUT}{feed,webhooks,endpoint,operation,entities,tokens,operator,feed-phone}.png`);
