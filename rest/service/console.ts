import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Koa from 'koa';
import { DomainError } from '../../src/domain/errors.ts';
import { sendAsset, staticAsset, type StaticAsset } from '../../src/http/static-asset.ts';

/**
 * The web console at `/console` (packages/console): its page, stylesheet and
 * ES modules (compiled by `tsc` on `npm install`, scripts/build-client.mjs)
 * served from this process under a strict Content-Security-Policy: scripts,
 * styles and requests (GraphQL over HTTP and graphql-ws, REST) to this origin
 * only, no inline script or style, no eval. The console keeps its tokens in
 * the tab's sessionStorage and sends them as bearer headers: the server trusts
 * no cookie and gives it nothing a token would not get from the API itself.
 * Every file carries a strong ETag and `no-cache`, so a browser revalidates
 * (304) instead of downloading again, and never runs a stale module; each is
 * read and compressed once (src/http/static-asset.ts).
 */
const ROOT = new URL('../../packages/console/', import.meta.url).pathname;

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Every servable file, read and compressed once: static/ (the page, the stylesheet) and the compiled modules in dist/. */
async function loadAssets(): Promise<Map<string, StaticAsset>> {
  const files = new Map<string, string>();
  for (const name of readdirSync(join(ROOT, 'static'))) files.set(name, join(ROOT, 'static', name));
  try {
    for (const name of readdirSync(join(ROOT, 'dist'), { recursive: true, encoding: 'utf8' }))
      if (name.endsWith('.js')) files.set(name.split('\\').join('/'), join(ROOT, 'dist', name));
  } catch {
    // not built: the page says so
  }
  const assets = new Map<string, StaticAsset>();
  for (const [name, file] of files) {
    const type = TYPES[name.split('.').pop()!];
    if (type) assets.set(name, await staticAsset(readFileSync(file), type, 'revalidate'));
  }
  return assets;
}

export function consolePage(): Koa.Middleware {
  let loading: Promise<Map<string, StaticAsset>> | undefined;
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const name = ctx.path === '/console' ? 'index.html' : ctx.path.startsWith('/console/') ? ctx.path.slice('/console/'.length) : undefined;
    if (name === undefined || (name === 'index.html' && ctx.path !== '/console')) return next();
    const assets = await (loading ??= loadAssets());
    const asset = assets.get(name);
    if (!asset) return next();
    if (name === 'index.html' && !assets.has('main.js')) {
      throw new DomainError('service_unavailable', 'The console is not built: run npm run build:client (npm install does it)');
    }
    ctx.state.route = name === 'index.html' ? '/console' : '/console/:asset'; // the metrics' and log's route template
    sendAsset(ctx, asset, { 'Content-Security-Policy': CONSOLE_CSP, 'Referrer-Policy': 'no-referrer' });
  };
}
