import { describe, expect } from 'vitest';
import { runsBrowser, offlinePage, useBrowser } from '../support/browser.ts';
import { appTest } from '../support/kit.ts';

const test = appTest();

test('GET /docs serves the reference page and its assets from this server under a strict CSP; other paths stay 404', async ({ app }) => {
  const page = await fetch(`${app.origin}/docs`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const csp = page.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'self'");
  const html = await page.text();
  for (const src of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
    expect(src[1]!.startsWith('/docs/'), src[1]).toBe(true);
    expect((await fetch(app.origin + src[1])).status, src[1]).toBe(200);
  }
  expect((await fetch(`${app.origin}/docs/package.json`)).status).toBe(404);
  expect((await fetch(`${app.origin}/docs/..%2Fpackage.json`)).status).toBe(404);
  expect((await fetch(`${app.origin}/docs/swagger-ui-bundle.js.map`)).status).toBe(404);
});

describe.skipIf(!runsBrowser)('the API reference in a real browser', () => {
  const browser = useBrowser();

  test('renders every Surface B operation with no host but this server and no CSP violation, and switches documents', {
    timeout: 90_000,
  }, async ({ app }) => {
    const { page, elsewhere, errors, consoleErrors } = await offlinePage(browser(), app.origin);
    expect((await page.goto(`${app.origin}/docs`))?.status()).toBe(200);
    // Swagger UI resolves and normalizes an OpenAPI 3.1 document through apidom before it draws anything: about 5 s of
    // the renderer's CPU for Surface B on an idle machine, 30 s and more beside a busy CI pass (one such run went past
    // Playwright's default 30 s). The test's own timeout bounds this wait instead.
    await page.locator('.opblock').first().waitFor({ timeout: 80_000 });
    const spec = (await (await fetch(`${app.origin}/v1/platform/openapi.json`)).json()) as { paths: Record<string, object> };
    const documented = Object.values(spec.paths).reduce((n, methods) => n + Object.keys(methods).length, 0);
    await expect.poll(() => page.locator('.opblock').count()).toBe(documented);
    await expect.poll(() => page.locator('.opblock-summary-path').allInnerTexts()).toContain('/webhook_endpoints');

    await page.locator('select#select').selectOption({ label: 'Surface A (/api)' });
    await expect.poll(() => page.locator('.opblock-summary-path').allInnerTexts()).toContain('/units/create');
    expect(elsewhere).toEqual([]);
    expect([...errors, ...consoleErrors]).toEqual([]);
    await page.close();
  });
});
