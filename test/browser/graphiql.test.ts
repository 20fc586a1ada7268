import { describe, expect } from 'vitest';
import type { Page } from 'playwright-core';
import { hasChromium, offlinePage, useBrowser } from '../support/browser.ts';
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
  const browser = useBrowser();

  test('works with no host but this server: a small shell with hashed files, takes a bearer token, shows the schema and runs a query', {
    timeout: 180_000,
  }, async ({ app }) => {
    const { token } = await buildTenant(app, ['events:read']);
    // Console errors are expected until the token is set (the schema's introspection answers 401).
    const { page, elsewhere, errors } = await offlinePage(browser(), app.origin);
    const files: { url: string; cacheControl?: string; encoding?: string }[] = [];
    page.on('response', (r) => {
      const h = r.headers();
      if (r.url().startsWith(`${app.origin}/graphql/assets/`))
        files.push({ url: r.url(), cacheControl: h['cache-control'], encoding: h['content-encoding'] });
    });
    const res = await page.goto(`${app.origin}/graphql`, { waitUntil: 'load', timeout: 120_000 }); // the first load builds the files
    expect(res?.status()).toBe(200);
    // A small shell; GraphiQL's script and stylesheet are hashed files, compressed and cached for a year.
    expect(Number((await res!.allHeaders())['content-length'])).toBeLessThan(4096);
    await expect.poll(() => files.filter((f) => /\.(js|css)$/.test(f.url)).length).toBeGreaterThanOrEqual(3);
    for (const f of files) expect(f.cacheControl, f.url).toBe('public, max-age=31536000, immutable');
    for (const f of files.filter((f) => /\/graphiql\.\w+\.(js|css)$/.test(f.url))) expect(f.encoding, f.url).toBe('br');
    expect(await page.title()).toBe('Platform API');
    // The headers tab is open with the bearer placeholder to replace.
    await expect.poll(() => page.locator('.graphiql-editor-tool').textContent()).toMatch(/Authorization.*Bearer\s+sk_platform_live_/);

    await setEditor(page, '.graphiql-editor-tool', JSON.stringify({ Authorization: `Bearer ${token}` }));
    // With the token, the schema loads: re-fetched, it fills the documentation explorer.
    const introspected = page.waitForResponse(
      (r) => r.url() === `${app.origin}/graphql` && (r.request().postData() ?? '').includes('IntrospectionQuery') && r.status() === 200,
    );
    await page.getByLabel('Re-fetch GraphQL schema').click();
    await introspected;
    await page.getByLabel('Show Documentation Explorer').click();
    await expect.poll(() => page.locator('.graphiql-doc-explorer').textContent()).toMatch(/Query/);
    await setEditor(page, '.graphiql-query-editor', '{ events(first: 1) { edges { cursor } } }');
    const answered = page.waitForResponse(
      (r) => r.url() === `${app.origin}/graphql` && (r.request().postData() ?? '').replace(/\s/g, '').includes('events(first:1)'),
    );
    await page.locator('.graphiql-execute-button').click();
    const response = await answered;
    expect(response.status()).toBe(200);
    expect(await response.json()).toEqual({ data: { events: { edges: [] } } });
    await expect.poll(() => page.locator('.graphiql-response').textContent()).toMatch(/"edges":\s*\[\]/);
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
