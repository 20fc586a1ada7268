import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Koa from 'koa';
import { DomainError } from '../../src/domain/errors.ts';

/**
 * The web console at `/console` (packages/console): its page, stylesheet and
 * ES modules (compiled by `tsc` on `npm install`, scripts/build-client.mjs)
 * served from this process under a strict Content-Security-Policy: scripts,
 * styles and requests (GraphQL over HTTP and graphql-ws, REST) to this origin
 * only, no inline script or style, no eval. The console keeps its tokens in
 * the tab's sessionStorage and sends them as bearer headers: the server trusts
 * no cookie and gives it nothing a token would not get from the API itself.
 * Every file carries a strong ETag and `no-cache`, so a browser revalidates
 * (304) instead of downloading again, and never runs a stale module.
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

interface Asset {
  type: string;
  body: Buffer;
  etag: string;
}

/** Every servable file, read once: static/ (the page, the stylesheet) and the compiled modules in dist/. */
function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const add = (name: string, file: string) => {
    const type = TYPES[name.split('.').pop()!];
    if (!type) return;
    const body = readFileSync(file);
    assets.set(name, { type, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
  };
  for (const name of readdirSync(join(ROOT, 'static'))) add(name, join(ROOT, 'static', name));
  let modules: string[] = [];
  try {
    modules = readdirSync(join(ROOT, 'dist'), { recursive: true, encoding: 'utf8' });
  } catch {
    return assets; // not built: the page says so
  }
  for (const name of modules) if (name.endsWith('.js')) add(name.split('\\').join('/'), join(ROOT, 'dist', name));
  return assets;
}

export function consolePage(): Koa.Middleware {
  let assets: Map<string, Asset> | undefined;
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const name = ctx.path === '/console' ? 'index.html' : ctx.path.startsWith('/console/') ? ctx.path.slice('/console/'.length) : undefined;
    if (name === undefined || (name === 'index.html' && ctx.path !== '/console')) return next();
    assets ??= loadAssets();
    const asset = assets.get(name);
    if (!asset) return next();
    if (name === 'index.html' && !assets.has('main.js')) {
      throw new DomainError('service_unavailable', 'The console is not built: run npm run build:client (npm install does it)');
    }
    ctx.state.route = name === 'index.html' ? '/console' : '/console/:asset'; // the metrics' and log's route template
    ctx.set('Content-Security-Policy', CONSOLE_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', asset.etag);
    ctx.type = asset.type;
    ctx.status = 200;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.body = asset.body;
  };
}
