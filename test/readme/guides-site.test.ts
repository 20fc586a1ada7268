import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { DOCS_DIR, guidePages } from '../../rest/service/guide-pages.ts';
import { pageUrl, type SearchEntry, searchIndex } from '../../rest/service/guides.ts';
import { appTest } from '../support/kit.ts';

/**
 * The guides at /docs (rest/service/guides.ts), through HTTP: every page under docs/ is served rendered, under the
 * API reference's CSP, with the navigation and the search box; the search finds a term over the served index; and
 * every link between the pages (and every image) resolves, anchors included.
 */
const test = appTest();

const CSP = /^default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; .*connect-src 'self'.*frame-ancestors 'none'$/;

test('every page under docs/ is served at its URL, rendered, under the reference CSP', async ({ app }) => {
  for (const page of guidePages()) {
    const res = await app.http.get(pageUrl(page));
    expect(res.status, page).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toMatch(CSP);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const title = /^# (.*)$/m.exec(readFileSync(join(DOCS_DIR, page), 'utf8'))![1]!.replace(/`/g, '');
    expect(res.text, page).toContain(
      `<title>${title.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')} · Platform API</title>`,
    );
    expect(res.text).not.toMatch(/<script>|<script [^>]*>[^<]/); // nothing inline: the CSP would refuse it
    expect(res.text).not.toContain('docs-test:'); // the docs test's markers are comments, never shown
  }
  const webhooks = await app.http.get('/docs/guides/webhooks');
  expect(webhooks.text).toContain('<h2 id="webhook-delivery">Webhook delivery</h2>');
  expect(webhooks.text).toContain('<pre><code class="language-console">$ curl');
  expect(webhooks.text).toMatch(/<table><thead><tr><th>Header<\/th>/);
  // The reference stays where it was.
  expect((await app.http.get('/docs')).text).toContain('swagger-ui-bundle.js');
}, 180_000); // each page is compressed on its first request: a few seconds in all, a minute on a loaded machine

test('the search box searches an index of every section, served beside the page: a term finds its section', async ({ app }) => {
  const page = (await app.http.get('/docs/guides')).text;
  const script = /<script type="module" src="(\/docs\/assets\/guides\.[0-9a-f]+\.js)"><\/script>/.exec(page)![1]!;
  const indexUrl = /<input id="search" [^>]*data-index="(\/docs\/assets\/search-index\.[0-9a-f]+\.json)"/.exec(page)![1]!;
  const js = await app.http.get(script);
  expect(js.status).toBe(200);
  expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  expect(js.text).toContain('function searchIndex('); // the function this test runs is the one the browser runs
  const index = (await app.http.get(indexUrl)).body as SearchEntry[];
  const hits = searchIndex(index, 'Retry-After clamped');
  expect(hits[0]?.url).toBe('/docs/guides/webhooks#webhook-delivery');
  expect(searchIndex(index, 'waiting_reason funding_required').map((h) => h.url)).toContain(
    '/docs/concepts/operations#why-an-operation-waits',
  );
  expect(searchIndex(index, 'no-such-word-anywhere')).toEqual([]);
}, 120_000);

test('every link between the pages resolves, to a page that has the anchor it names; images are served', async ({ app }) => {
  const broken: string[] = [];
  const pages = new Map<string, string>();
  const fetchPage = async (url: string) => {
    if (!pages.has(url)) {
      const res = await app.http.get(url);
      pages.set(url, res.status === 200 ? res.text : '');
    }
    return pages.get(url)!;
  };
  let links = 0;
  for (const page of guidePages()) {
    const html = await fetchPage(pageUrl(page));
    const main = html.slice(html.indexOf('<main>'));
    for (const [, href] of main.matchAll(/<a href="(\/[^"]*)"/g)) {
      links++;
      const [path, anchor] = href!.split('#');
      const target = path ? await fetchPage(path) : html;
      if (!target) broken.push(`${page}: ${href} (not served)`);
      else if (anchor && !target.includes(` id="${anchor}"`)) broken.push(`${page}: ${href} (no such anchor)`);
    }
    for (const [, src] of main.matchAll(/<img src="([^"]*)"/g)) {
      const res = await app.http.get(src!);
      if (res.status !== 200 || res.headers.get('content-type') !== 'image/png') broken.push(`${page}: image ${src}`);
    }
  }
  expect(broken).toEqual([]);
  expect(links).toBeGreaterThan(100);
}, 120_000);

test('a link to a file outside docs/ renders as its text, never as a link the server cannot answer', async ({ app }) => {
  const html = (await app.http.get('/docs/operating/performance')).text;
  expect(html).toContain('bench/results/latest.md');
  expect(html).not.toMatch(/href="[^"]*bench\//);
});
