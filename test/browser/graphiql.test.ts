import { describe, expect } from 'vitest';
import type { Page } from 'playwright-core';
import { runsBrowser, offlinePage, useBrowser } from '../support/browser.ts';
import { appTest, buildTenant, buildToken } from '../support/kit.ts';

const test = appTest();

/** Replaces the whole text of the Monaco editor inside `container`. */
async function setEditor(page: Page, container: string, text: string): Promise<void> {
  await page.locator(`${container} .monaco-editor >> visible=true`).first().click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

describe.skipIf(!runsBrowser)('GraphiQL in a real browser', () => {
  const browser = useBrowser();

  test('works with no host but this server: a small shell with hashed files, asks for the key before any request, shows the schema, re-fetches it when the headers change, and runs a query', {
    timeout: 180_000,
  }, async ({ app }) => {
    const { org, token } = await buildTenant(app, ['events:read']);
    const other = (await buildToken(app, org, ['events:read', 'webhooks:read'])).secret;
    const { page, elsewhere, errors, consoleErrors } = await offlinePage(browser(), app.origin);
    const files: { url: string; cacheControl?: string; encoding?: string }[] = [];
    const posts: { key: string | undefined; body: string }[] = [];
    page.on('response', (r) => {
      const h = r.headers();
      if (r.url().startsWith(`${app.origin}/graphql/assets/`))
        files.push({ url: r.url(), cacheControl: h['cache-control'], encoding: h['content-encoding'] });
    });
    page.on('request', (r) => {
      if (r.url() === `${app.origin}/graphql` && r.method() === 'POST')
        posts.push({ key: r.headers().authorization?.replace(/^Bearer /, ''), body: r.postData() ?? '' });
    });
    const introspectedWith = (key: string) =>
      page.waitForResponse(
        (r) =>
          r.url() === `${app.origin}/graphql` &&
          (r.request().postData() ?? '').includes('IntrospectionQuery') &&
          r.request().headers().authorization === `Bearer ${key}`,
      );
    const res = await page.goto(`${app.origin}/graphql`, { waitUntil: 'load', timeout: 120_000 }); // the first load builds the files
    expect(res?.status()).toBe(200);
    // A small shell; GraphiQL's script and stylesheet are hashed files, compressed and cached for a year.
    expect(Number((await res!.allHeaders())['content-length'])).toBeLessThan(4096);
    await expect.poll(() => files.filter((f) => /\.(js|css)$/.test(f.url)).length).toBeGreaterThanOrEqual(3);
    for (const f of files) expect(f.cacheControl, f.url).toBe('public, max-age=31536000, immutable');
    for (const f of files.filter((f) => /\/graphiql\.\w+\.(js|css)$/.test(f.url))) expect(f.encoding, f.url).toBe('br');
    expect(await page.title()).toBe('Platform API');

    // First open: the page asks for the key, and nothing has been asked of the API yet (no red invalid_token).
    const prompt = page.locator('form#key-prompt');
    await prompt.locator('input[name=key]').waitFor();
    expect(posts).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(await page.locator('.graphiql-container').count()).toBe(0);

    // A wrong key is refused in the prompt, in words, and GraphiQL does not open.
    await prompt.locator('input[name=key]').fill('sk_platform_live_nope');
    await prompt.locator('button[type=submit]').click();
    await expect
      .poll(() => prompt.locator('[role=alert]').textContent())
      .toBe('This key was not accepted (wrong, revoked or expired). (invalid_token)');
    expect(await page.locator('.graphiql-container').count()).toBe(0);

    // The key: GraphiQL opens with it in the header editor, and its first introspection carries it and succeeds.
    const before = consoleErrors.length;
    const introspected = introspectedWith(token);
    await prompt.locator('input[name=key]').fill(token);
    await prompt.locator('button[type=submit]').click();
    expect((await introspected).status()).toBe(200);
    await expect.poll(() => page.locator('.graphiql-editor-tool').textContent()).toMatch(new RegExp(`Authorization.*Bearer\\s+${token}`));
    await page.getByLabel('Show Documentation Explorer').click();
    await expect.poll(() => page.locator('.graphiql-doc-explorer').textContent()).toMatch(/Query/);
    expect(posts.every((p) => p.key === token || p.key === 'sk_platform_live_nope')).toBe(true);

    // Other headers: the schema is read again with them, without a click or a reload.
    const again = introspectedWith(other);
    await setEditor(page, '.graphiql-editor-tool', JSON.stringify({ Authorization: `Bearer ${other}` }));
    expect((await again).status()).toBe(200);
    await expect.poll(() => page.locator('.graphiql-doc-explorer').textContent()).toMatch(/Query/);

    await setEditor(page, '.graphiql-query-editor', '{ events(first: 1) { edges { cursor } } }');
    const answered = page.waitForResponse(
      (r) => r.url() === `${app.origin}/graphql` && (r.request().postData() ?? '').replace(/\s/g, '').includes('events(first:1)'),
    );
    await page.locator('.graphiql-execute-button').click();
    const response = await answered;
    expect(response.status()).toBe(200);
    expect(response.request().headers().authorization).toBe(`Bearer ${other}`);
    expect(await response.json()).toEqual({ data: { events: { edges: [] } } });
    await expect.poll(() => page.locator('.graphiql-response').textContent()).toMatch(/"edges":\s*\[\]/);
    expect(consoleErrors.slice(before)).toEqual([]);

    // A reload in this tab keeps the key (sessionStorage), asks nothing, and loads the schema with it.
    const reloaded = introspectedWith(other);
    await page.reload({ waitUntil: 'load' });
    expect((await reloaded).status()).toBe(200);
    expect(await prompt.isHidden()).toBe(true);
    expect(await page.evaluate(() => localStorage.getItem('graphiql:headers') ?? '')).not.toContain(other);
    expect(elsewhere).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
