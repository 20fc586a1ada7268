import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, posix } from 'node:path';
import { contentHash, type StaticAsset, staticAsset } from '../../src/http/static-asset.ts';
import { DOCS_DIR, guidePages } from './guide-pages.ts';
import { escapeHtml, renderMarkdown } from './markdown.ts';

/**
 * The guides under docs/, served at /docs beside the API reference (rest/service/docs.ts): each page rendered from
 * its Markdown once, on the first request for any of them, with a navigation of every page and a search box. The
 * search runs in the browser over an index built here (every page's title, sections and text), so it works offline
 * and under the reference's CSP (scripts from this origin only, nothing inline). Links between pages point at the
 * pages' URLs; a link to a file outside docs/ renders as its text.
 *
 * URLs: docs/README.md (the map) is /docs/guides; docs/<path>.md is /docs/<path>, and a folder's README.md is the
 * folder's URL; images and other files under docs/ keep their path. The stylesheet, the script and the index carry
 * their content hash in their name (/docs/assets/…) and are immutable; pages and images are revalidated.
 */
export interface GuideSite {
  /** By URL path: every page, image and asset the guides serve. */
  files: Map<string, () => Promise<StaticAsset>>;
}

export interface SearchEntry {
  /** The page's URL, with `#anchor` for a section. */
  url: string;
  title: string;
  /** The section's (or the page's leading) text, lower-cased for matching. */
  text: string;
}

/** Where each page is served. */
export function pageUrl(page: string): string {
  if (page === 'README.md') return '/docs/guides';
  const path = page.replace(/(^|\/)README\.md$/, '').replace(/\.md$/, '');
  return `/docs/${path}`;
}

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
};

export function buildGuideSite(dir = DOCS_DIR): GuideSite {
  const pages = guidePages(dir);
  const files = new Map<string, () => Promise<StaticAsset>>();
  const index: SearchEntry[] = [];
  const rendered = pages.map((page) => {
    const link = (target: string) => resolveLink(dir, pages, page, target, files);
    const r = renderMarkdown(readFileSync(join(dir, page), 'utf8'), { link });
    index.push(...searchEntries(pageUrl(page), r.title, r.html));
    return { page, ...r };
  });

  const css = asset('guides', 'css', STYLESHEET, 'text/css; charset=utf-8');
  const indexJson = asset('search-index', 'json', JSON.stringify(index), 'application/json; charset=utf-8');
  const script = asset('guides', 'js', browserScript(), 'text/javascript; charset=utf-8');
  for (const a of [css, indexJson, script]) files.set(a.url, a.load);

  const nav = navigation(rendered);
  for (const r of rendered) {
    const html = layout({ title: r.title, body: r.html, nav: nav(r.page), css: css.url, script: script.url, index: indexJson.url });
    files.set(
      pageUrl(r.page),
      once(() => staticAsset(html, 'text/html; charset=utf-8', 'revalidate')),
    );
  }
  return { files };
}

/**
 * Where a link written in `page` points: another page (with its anchor), a file under docs/ (served as it is), an
 * absolute URL, or nothing (a file outside docs/ or a target that does not exist, shown as text).
 */
function resolveLink(dir: string, pages: string[], page: string, target: string, files: GuideSite['files']): string | null {
  if (/^(https?:|mailto:)/.test(target)) return target;
  const [path = '', anchor] = target.split('#');
  if (!path) return `${anchor ? `#${anchor}` : ''}`;
  const resolved = posix.normalize(posix.join(posix.dirname(page), path)).replace(/\/$/, '');
  if (resolved.startsWith('..')) return null;
  const fragment = anchor ? `#${anchor}` : '';
  if (pages.includes(resolved)) return pageUrl(resolved) + fragment;
  if (pages.includes(`${resolved}/README.md`)) return pageUrl(`${resolved}/README.md`) + fragment;
  const file = join(dir, resolved);
  if (!TYPES[extname(resolved)] || !existsSync(file) || !statSync(file).isFile()) return null;
  const url = `/docs/${resolved}`;
  if (!files.has(url))
    files.set(
      url,
      once(() => staticAsset(readFileSync(file), TYPES[extname(resolved)]!, 'revalidate')),
    );
  return url;
}

/** A search entry per section (the text under each heading), plus the page's text before its first section. */
function searchEntries(url: string, title: string, html: string): SearchEntry[] {
  const entries: SearchEntry[] = [];
  const parts = html.split(/(?=<h[2-6] id=")/);
  for (const part of parts) {
    const heading = /^<h[2-6] id="([^"]+)">([\s\S]*?)<\/h[2-6]>/.exec(part);
    // Prose and tables, not the code blocks: their long JSON outputs would double the index and match everything.
    const text = decode(part.replace(/<pre>[\s\S]*?<\/pre>/g, ' ').replace(/<[^>]+>/g, ' '))
      .replace(/\s+/g, ' ')
      .trim();
    if (!text) continue;
    entries.push({
      url: heading ? `${url}#${heading[1]}` : url,
      title: heading ? `${title}: ${decode(heading[2]!.replace(/<[^>]+>/g, ''))}` : title,
      text: text.toLowerCase(),
    });
  }
  return entries;
}

const decode = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');

/**
 * The search, run in the browser over the index (and by the test over the same index): every word of the query
 * must occur in a section; sections whose title holds a word come first. Written in plain JavaScript: its source
 * is the served script's.
 */
export function searchIndex(index: SearchEntry[], query: string): SearchEntry[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return [];
  const hits = index.filter((e) => words.every((w) => e.text.includes(w) || e.title.toLowerCase().includes(w)));
  const inTitle = (e: SearchEntry) => words.some((w) => e.title.toLowerCase().includes(w));
  return hits
    .filter(inTitle)
    .concat(hits.filter((e) => !inTitle(e)))
    .slice(0, 30);
}

function browserScript(): string {
  return `const searchIndex = ${searchIndex.toString()};
const input = document.getElementById('search');
const results = document.getElementById('results');
let index;
input.addEventListener('input', async () => {
  index ??= await (await fetch(input.dataset.index)).json();
  results.replaceChildren();
  const query = input.value.trim();
  results.hidden = !query;
  if (!query) return;
  const hits = searchIndex(index, query);
  if (!hits.length) {
    const none = document.createElement('li');
    none.textContent = 'Nothing found';
    results.append(none);
  }
  for (const hit of hits) {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = hit.url;
    a.textContent = hit.title;
    const at = hit.text.indexOf(query.toLowerCase().split(/\\s+/)[0]);
    const snippet = document.createElement('span');
    snippet.textContent = hit.text.slice(Math.max(0, at - 60), at + 100);
    li.append(a, snippet);
    results.append(li);
  }
});
`;
}

function navigation(rendered: { page: string; title: string }[]): (current: string) => string {
  const groups = new Map<string, { page: string; title: string }[]>();
  for (const r of rendered) {
    const folder = r.page.includes('/') ? r.page.split('/')[0]! : '';
    groups.set(folder, [...(groups.get(folder) ?? []), r]);
  }
  const names: Record<string, string> = {
    '': 'Start',
    guides: 'Guides',
    concepts: 'Concepts',
    operating: 'Operating it',
    reference: 'Reference',
    adr: 'Decision records',
    internals: 'Internals',
  };
  return (current) =>
    [...groups]
      .map(
        ([folder, items]) =>
          `<h2>${escapeHtml(names[folder] ?? folder)}</h2><ul>${items
            .map((r) => {
              const mark = r.page === current ? ' aria-current="page"' : '';
              return `<li><a href="${pageUrl(r.page)}"${mark}>${escapeHtml(r.title)}</a></li>`;
            })
            .join('')}</ul>`,
      )
      .join('');
}

function layout(p: { title: string; body: string; nav: string; css: string; script: string; index: string }): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(p.title)} · Platform API</title>
    <link rel="stylesheet" href="${p.css}">
  </head>
  <body>
    <header>
      <a href="/docs/guides">Platform API guides</a>
      <a href="/docs">API reference</a>
      <div class="search">
        <input id="search" type="search" placeholder="Search the guides" aria-label="Search the guides" data-index="${p.index}" autocomplete="off">
        <ul id="results" hidden></ul>
      </div>
    </header>
    <nav aria-label="Pages">${p.nav}</nav>
    <main>
${p.body}
    </main>
    <script type="module" src="${p.script}"></script>
  </body>
</html>
`;
}

function asset(name: string, ext: string, content: string, type: string) {
  const url = `/docs/assets/${name}.${contentHash(content)}.${ext}`;
  return { url, load: once(() => staticAsset(content, type, 'immutable')) };
}

/** Made on first use and kept (a failed attempt is retried). */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= make();
    value.catch(() => (value = undefined));
    return value;
  };
}

const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #fff; --line: #d1d9e0; --code: #f6f8fa; --accent: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --line: #3d444d; --code: #151b23; --accent: #4493f8; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg);
  display: grid; grid-template-columns: 16rem minmax(0, 1fr); grid-template-areas: "header header" "nav main"; }
header { grid-area: header; display: flex; gap: 1.5rem; align-items: center; padding: .75rem 1.5rem; border-bottom: 1px solid var(--line); }
header > a:first-child { font-weight: 600; }
.search { margin-left: auto; position: relative; }
#search { width: 20rem; max-width: 50vw; padding: .4rem .6rem; font: inherit; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
#results { position: absolute; right: 0; z-index: 1; width: 32rem; max-width: 90vw; max-height: 70vh; overflow: auto; margin: .25rem 0 0; padding: .5rem;
  list-style: none; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; }
#results li { padding: .35rem .25rem; border-bottom: 1px solid var(--line); }
#results span { display: block; color: var(--muted); font-size: .85rem; }
nav { grid-area: nav; padding: 1rem 1.5rem; border-right: 1px solid var(--line); font-size: .9rem; }
nav h2 { font-size: .8rem; text-transform: uppercase; color: var(--muted); margin: 1rem 0 .25rem; }
nav ul { list-style: none; padding: 0; margin: 0; }
nav a[aria-current] { font-weight: 600; }
main { grid-area: main; padding: 1rem 2.5rem 4rem; max-width: 60rem; }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
code { font: .875em ui-monospace, SFMono-Regular, Menlo, monospace; background: var(--code); padding: .1em .3em; border-radius: 4px; }
pre { background: var(--code); padding: .9rem 1rem; border-radius: 6px; overflow: auto; }
pre code { padding: 0; background: none; }
.table { overflow: auto; } table { border-collapse: collapse; margin: 1rem 0; font-size: .9rem; }
th, td { border: 1px solid var(--line); padding: .35rem .6rem; text-align: left; vertical-align: top; }
img { max-width: 100%; }
blockquote { margin: 0; padding: 0 1rem; color: var(--muted); border-left: 3px solid var(--line); }
@media (max-width: 50rem) { body { grid-template-columns: 1fr; grid-template-areas: "header" "main" "nav"; } nav { border: 0; } main { padding: 1rem; } }
`;
