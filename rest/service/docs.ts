import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Koa from 'koa';
import { DomainError } from '../../src/domain/errors.ts';
import { sendAsset, staticAsset, type StaticAsset } from '../../src/http/static-asset.ts';
import { buildGuideSite, type GuideSite } from './guides.ts';

/**
 * The API reference at `/docs`, and the guides beside it (rest/service/guides.ts: docs/ rendered, from
 * /docs/guides on). The reference is Swagger UI (swagger-ui-dist, served from this
 * process, never a CDN) over the three OpenAPI documents, with a strict
 * Content-Security-Policy: scripts and styles from this origin only (Swagger
 * UI sets inline style attributes), requests to this origin only, and no
 * validator badge (it would call validator.swagger.io). Files are served
 * compressed, with an ETag, revalidated on every use (src/http/static-asset.ts).
 */
const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: 'swagger-ui.css', type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'text/javascript; charset=utf-8' },
  'swagger-ui-standalone-preset.js': { file: 'swagger-ui-standalone-preset.js', type: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { file: 'favicon-32x32.png', type: 'image/png' },
};

const DOCUMENTS = [
  { name: 'Surface B (/v1/platform)', url: '/v1/platform/openapi.json' },
  { name: 'Surface A (/api)', url: '/api/openapi.json' },
  { name: 'Dashboard, operator and service routes', url: '/openapi.json' },
];

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Platform API reference</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css">
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
  </head>
  <body>
    <div id="reference"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/swagger-ui-standalone-preset.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  urls: ${JSON.stringify(DOCUMENTS)},
  'urls.primaryName': ${JSON.stringify(DOCUMENTS[0]!.name)},
  dom_id: '#reference',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
});
`;

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Each file read and compressed once, on its first request (src/http/static-asset.ts). */
const files = new Map<string, Promise<StaticAsset>>();
function file(name: string): Promise<StaticAsset> {
  let asset = files.get(name);
  if (!asset) {
    const load =
      name === 'index'
        ? staticAsset(PAGE, 'text/html; charset=utf-8', 'revalidate')
        : name === 'init.js'
          ? staticAsset(INIT, 'text/javascript; charset=utf-8', 'revalidate')
          : readFile(join(dist, ASSETS[name]!.file)).then((body) => staticAsset(body, ASSETS[name]!.type, 'revalidate'));
    files.set(name, (asset = load));
    asset.catch(() => files.delete(name));
  }
  return asset;
}

/** The guides, read and rendered from docs/ on the first request under /docs (the reference's own files need none of it). */
let guides: GuideSite | undefined;

export function docsPage(): Koa.Middleware {
  return async (ctx, next) => {
    const name = ctx.path === '/docs' ? 'index' : ctx.path.startsWith('/docs/') ? ctx.path.slice('/docs/'.length) : undefined;
    if (name === undefined) return next();
    const reference = name === 'index' || name === 'init.js' || Object.hasOwn(ASSETS, name);
    const guide = reference ? undefined : (guides ??= buildGuideSite()).files.get(ctx.path);
    if (!reference && !guide) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD')
      throw new DomainError('method_not_allowed', 'Use GET for this path', null, { allow: 'GET, HEAD' });
    // The metrics' and log's route template: never the raw path.
    ctx.state.route = name === 'index' ? '/docs' : reference || name.startsWith('assets/') ? '/docs/:asset' : '/docs/:page';
    sendAsset(ctx, await (guide ? guide() : file(name)), { 'Content-Security-Policy': CSP });
  };
}
