import { describe, expect } from 'vitest';
import { runsBrowser, offlinePage, useBrowser } from '../support/browser.ts';
import { appTest } from '../support/kit.ts';

/** The guides at /docs in a real browser: the search box works under the CSP, offline, and its results lead to the section. */
const test = appTest();

describe.skipIf(!runsBrowser)('the guides in a real browser', () => {
  const browser = useBrowser();

  test('the search box finds a term and its first result opens the section, with no host but this server and no CSP violation', {
    timeout: 90_000,
  }, async ({ app }) => {
    const { page, elsewhere, errors, consoleErrors } = await offlinePage(browser(), app.origin);
    expect((await page.goto(`${app.origin}/docs/guides`))?.status()).toBe(200);
    await page.locator('#search').fill('Retry-After clamped');
    const first = page.locator('#results li a').first();
    await expect.poll(() => first.textContent()).toBe('Webhooks and delivery: Webhook delivery');
    await first.click();
    await page.waitForURL(`${app.origin}/docs/guides/webhooks#webhook-delivery`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Webhooks and delivery');
    await page.locator('nav a', { hasText: 'Ordering and seq' }).click();
    await page.waitForURL(`${app.origin}/docs/concepts/ordering`);
    expect(elsewhere).toEqual([]);
    expect([...errors, ...consoleErrors]).toEqual([]);
    await page.close();
  });
});
