import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type Koa from 'koa';
import { contentHash, sendAsset, staticAsset, type StaticAsset } from '../http/static-asset.ts';

/**
 * GraphiQL at `GET /graphql` (Accept: text/html): a shell of about 2 KB (its key prompt included) and its files
 * under `/graphql/assets/`, named by content hash, so a browser fetches each once a year and revalidates nothing
 * (src/http/static-asset.ts). The
 * files are @graphql-yoga/render-graphiql's own (its CSS, its JS, Monaco's editor workers, its icon), which it ships
 * as strings to inline into one 9 MB page; they are taken out once per process, on the first page request, by a
 * child process, so the 9 MB module is parsed there and this process keeps only the files (and their compressed
 * forms). No file reaches another host; the page runs under a Content-Security-Policy of this origin only.
 */
export const GRAPHIQL_ASSETS = '/graphql/assets/';

/**
 * Headers are not persisted in localStorage: the key is asked for first (below) and kept in this tab's
 * sessionStorage, and GraphiQL's header editor starts from it on each load.
 */
const OPTIONS = { title: 'Platform API', shouldPersistHeaders: false };

/**
 * Before GraphiQL renders, the page asks for an API key and checks it with one small query, so GraphiQL's first
 * request (its schema introspection) carries a key the API accepts: no red `invalid_token` on open. The key stays in
 * this tab (sessionStorage); the header editor starts with it. An edit of the headers that parses as JSON re-fetches
 * the schema (GraphiQL reads it once otherwise, and its docs would say "Error fetching schema" until a reload).
 */
const KEY_PROMPT = `
const KEY = 'platform.graphiql.key';
const headersFor = (key) => JSON.stringify({ Authorization: 'Bearer ' + key }, null, 2);
const MEANING = {
  invalid_token: 'This key was not accepted (wrong, revoked or expired).',
  developer_access_paused: 'Developer access is paused: the operator engaged the kill switch.',
};
let shown = '';
let timer;
function headersEdited(value) {
  clearTimeout(timer);
  timer = setTimeout(() => {
    if (value === shown) return;
    let parsed;
    try { parsed = JSON.parse(value); } catch { return; } // still being typed
    shown = value;
    const key = /^Bearer\\s+(\\S+)$/i.exec(String(parsed.Authorization ?? parsed.authorization ?? ''))?.[1];
    if (key) sessionStorage.setItem(KEY, key);
    document.querySelector('button[aria-label^="Re-fetch GraphQL schema"]')?.click();
  }, 300);
}
function render(key) {
  document.querySelector('#key-prompt').hidden = true;
  shown = headersFor(key);
  YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), { ...OPTIONS, headers: shown, onEditHeaders: headersEdited });
}
async function refusal(key) {
  const res = await fetch(location.pathname, {
    method: 'POST',
    headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
  });
  const error = (await res.json().catch(() => null))?.errors?.[0];
  if (!error && res.ok) return null;
  const code = error?.extensions?.code ?? 'http_' + res.status;
  return (MEANING[code] ?? 'The API refused this key.') + ' (' + code + ')';
}
addEventListener('DOMContentLoaded', () => {
  const stored = sessionStorage.getItem(KEY);
  if (stored) return render(stored);
  const form = document.querySelector('#key-prompt');
  const problem = form.querySelector('[role=alert]');
  form.hidden = false;
  form.key.focus();
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = form.key.value.trim();
    problem.textContent = '';
    const refused = await refusal(key).catch((e) => 'The server could not be reached: ' + e.message);
    if (refused) return void (problem.textContent = refused);
    sessionStorage.setItem(KEY, key);
    render(key);
  });
});
`;

/** Monaco's inline styles, and the editor workers it starts from this origin (yoga's page made them blob URLs). */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Yoga's own rule for a GraphiQL request (its use-graphiql plugin), so /graphql hands it on to this page. */
export const wantsGraphiQL = (ctx: Koa.Context): boolean =>
  ctx.path === '/graphql' && ctx.method === 'GET' && (ctx.get('accept') ?? '').includes('text/html');

interface Page {
  shell: StaticAsset;
  assets: Map<string, StaticAsset>;
}

const PARTS = ['css', 'js', 'editorWorkerService', 'jsonWorker', 'graphqlWorker', 'favicon'] as const;
type Part = (typeof PARTS)[number];

/**
 * The module's strings, read in a child process that writes their lengths (one JSON line) then their bytes: the 9 MB
 * module is parsed there and its memory goes back to the system when the child exits (a worker thread's would stay
 * in this process's heap arenas).
 */
async function readParts(): Promise<Record<Part, Buffer>> {
  const file = createRequire(import.meta.url).resolve('@graphql-yoga/render-graphiql/graphiql');
  const source = `
    const m = require(process.argv[1]);
    const parts = ${JSON.stringify(PARTS)}.map((k) => Buffer.from(m[k]));
    process.stdout.write(JSON.stringify(parts.map((b) => b.length)) + '\\n');
    for (const b of parts) process.stdout.write(b);`;
  const child = spawn(process.execPath, ['-e', source, file], { stdio: ['ignore', 'pipe', 'inherit'] });
  // Copied straight into one buffer of the announced size: no list of chunks joined at the end.
  let head = Buffer.alloc(0);
  let lengths: number[] | undefined;
  let all = Buffer.alloc(0);
  let filled = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    if (!lengths) {
      head = Buffer.concat([head, chunk]);
      const newline = head.indexOf(10);
      if (newline < 0) return;
      lengths = JSON.parse(head.subarray(0, newline).toString()) as number[];
      all = Buffer.allocUnsafe(lengths.reduce((a, b) => a + b, 0));
      chunk = head.subarray(newline + 1);
    }
    filled += chunk.copy(all, filled);
  });
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0 || !lengths || filled !== all.length) throw new Error(`GraphiQL's files were not read (exit code ${code})`);
  let at = 0;
  const out = {} as Record<Part, Buffer>;
  PARTS.forEach((k, i) => {
    out[k] = all.subarray(at, (at += lengths![i]!));
  });
  return out;
}

async function buildPage(): Promise<Page> {
  const parts = await readParts();
  const assets = new Map<string, StaticAsset>();
  const add = async (name: string, ext: string, type: string, body: Buffer | string): Promise<string> => {
    const file = `${name}.${contentHash(body)}.${ext}`;
    assets.set(file, await staticAsset(body, type, 'immutable'));
    return GRAPHIQL_ASSETS + file;
  };
  const js = 'text/javascript; charset=utf-8';
  const icon = /^data:([^;]+);base64,(.*)$/s.exec(parts.favicon.toString('latin1'));
  const [css, main, editor, json, graphql, favicon] = await Promise.all([
    add('graphiql', 'css', 'text/css; charset=utf-8', parts.css),
    add('graphiql', 'js', js, parts.js),
    add('editor.worker', 'js', js, parts.editorWorkerService),
    add('json.worker', 'js', js, parts.jsonWorker),
    add('graphql.worker', 'js', js, parts.graphqlWorker),
    icon ? add('favicon', 'ico', icon[1]!, Buffer.from(icon[2]!, 'base64')) : undefined,
  ]);
  // Set before GraphiQL's script runs; it renders once the document is parsed (no inline script under the CSP).
  const init = `self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_id, label) => (${JSON.stringify({ editorWorkerService: editor, json, graphql })})[label] };
const OPTIONS = ${JSON.stringify(OPTIONS)};
${KEY_PROMPT}`;
  const start = await add('init', 'js', js, init);
  const shell = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>${OPTIONS.title}</title>
${favicon ? `    <link rel="icon" href="${favicon}">\n` : ''}    <link rel="stylesheet" href="${css}">
    <script src="${start}"></script>
    <script src="${main}"></script>
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to run this app.</noscript>
    <form id="key-prompt" aria-label="API key" hidden style="max-width:36rem;margin:4rem auto;font:16px system-ui,sans-serif">
      <h1 style="font-size:1.4rem">${OPTIONS.title}: GraphiQL</h1>
      <p>Paste an API key (<code>sk_…</code>) to explore the schema and run queries. It stays in this tab and is sent only to this server.</p>
      <input name="key" type="password" autocomplete="off" required placeholder="sk_platform_live_…" style="width:100%;padding:.4rem;font:inherit">
      <p><button type="submit" style="padding:.4rem 1rem;font:inherit">Open GraphiQL</button></p>
      <p role="alert" style="color:#a11"></p>
    </form>
    <div id="root"></div>
  </body>
</html>
`;
  return { shell: await staticAsset(shell, 'text/html; charset=utf-8', 'revalidate'), assets };
}

/** The shell at `GET /graphql` (HTML) and its files; anything else under /graphql/assets/ is left to the 404. */
export function graphiqlPage(): Koa.Middleware {
  let page: Promise<Page> | undefined;
  const load = () => {
    page ??= buildPage().catch((e: unknown) => {
      page = undefined; // a failed build is retried by the next request
      throw e;
    });
    return page;
  };
  return async (ctx, next) => {
    if (wantsGraphiQL(ctx)) {
      ctx.state.route = '/graphql'; // the metrics' and log's route template
      return sendAsset(ctx, (await load()).shell, { 'Content-Security-Policy': CSP, 'Referrer-Policy': 'no-referrer' });
    }
    if (!ctx.path.startsWith(GRAPHIQL_ASSETS) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const asset = (await load()).assets.get(ctx.path.slice(GRAPHIQL_ASSETS.length));
    if (!asset) return next();
    ctx.state.route = `${GRAPHIQL_ASSETS}:asset`;
    sendAsset(ctx, asset, { 'Content-Security-Policy': CSP });
  };
}
