import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { hasChromium, launchChromium } from '../support/browser.ts';
import { appTest, buildTenant } from '../support/kit.ts';

const test = appTest();

/** Replaces the whole text of the Monaco editor inside `container`. */
async function setEditor(page: Page, container: string, text: string): Promise<void> {
  await page.locator(`${container} .monaco-editor >> visible=true`).first().click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

describe.skipIf(!hasChromium)('GraphiQL in a real browser', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());

  test('works with no host but this server: renders, takes a bearer token in the headers tab and runs a query', {
    timeout: 90_000,
  }, async ({ app }) => {
    const { token } = await buildTenant(app, ['events:read']);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const elsewhere: string[] = [];
    const errors: string[] = [];
    // Only this server answers: anything else is recorded and refused, as on a machine with no internet.
    await page.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.origin === app.origin) return route.continue();
      elsewhere.push(url.href);
      return route.abort();
    });
    page.on('pageerror', (e) => errors.push(e.message));
    const res = await page.goto(`${app.origin}/graphql`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('Platform API');
    // The headers tab is open with the bearer placeholder to replace.
    await expect.poll(() => page.locator('.graphiql-editor-tool').innerText()).toMatch(/Authorization.*Bearer\s+sk_platform_live_/);

    await setEditor(page, '.graphiql-editor-tool', JSON.stringify({ Authorization: `Bearer ${token}` }));
    await setEditor(page, '.graphiql-query-editor', '{ events(first: 1) { edges { cursor } } }');
    const answered = page.waitForResponse(
      (r) => r.url() === `${app.origin}/graphql` && (r.request().postData() ?? '').replace(/\s/g, '').includes('events(first:1)'),
    );
    await page.locator('.graphiql-execute-button').click();
    const response = await answered;
    expect(response.status()).toBe(200);
    expect(await response.json()).toEqual({ data: { events: { edges: [] } } });
    await expect.poll(() => page.locator('.graphiql-response').innerText()).toMatch(/"edges":\s*\[\]/);
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
