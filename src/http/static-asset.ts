import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type Koa from 'koa';

/**
 * The one way the unauthenticated pages (/docs, /console, GraphiQL) serve their files (docs/security.md,
 * "Unauthenticated pages and assets"): every file is read and compressed once (brotli and gzip, on libuv's thread
 * pool, never on the event loop, one at a time) and kept, so a request only picks the encoding its `Accept-Encoding`
 * allows and writes a Buffer it shares with every other request. Each encoding has its own strong ETag and a matching
 * `If-None-Match` is 304. A file whose URL carries its content hash is `immutable` for a year; a page or a file
 * named without its hash (the console's modules import each other by name) is `no-cache`: revalidated every time.
 */
export interface StaticAsset {
  type: string;
  caching: Caching;
  /** By content coding: `identity` always; `br` and `gzip` when compressing saved bytes. */
  bodies: Map<Coding, { body: Buffer; etag: string }>;
}

export type Caching = 'immutable' | 'revalidate';
type Coding = 'br' | 'gzip' | 'identity';

const CACHE_CONTROL: Record<Caching, string> = {
  immutable: 'public, max-age=31536000, immutable',
  revalidate: 'no-cache',
};
/** Below this, compression saves less than a packet. */
const MIN_COMPRESSED_BYTES = 1024;
const COMPRESSIBLE = /^(text\/|application\/(json|javascript)|image\/(svg\+xml|x-icon))/;
const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** A short hex digest of `body`: what a hashed asset's URL carries. */
export function contentHash(body: Buffer | string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 20);
}

export async function staticAsset(content: Buffer | string, type: string, caching: Caching): Promise<StaticAsset> {
  const body = typeof content === 'string' ? Buffer.from(content) : content;
  const hash = contentHash(body);
  const bodies: StaticAsset['bodies'] = new Map([['identity', { body, etag: `"${hash}"` }]]);
  if (body.length >= MIN_COMPRESSED_BYTES && COMPRESSIBLE.test(type)) {
    const br = await oneAtATime(() => brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }));
    const gz = await oneAtATime(() => gzipped(body, { level: 6 }));
    if (br.length < body.length) bodies.set('br', { body: br, etag: `"${hash}-br"` });
    if (gz.length < body.length) bodies.set('gzip', { body: gz, etag: `"${hash}-gz"` });
  }
  return { type, caching, bodies };
}

/**
 * Compressions run one at a time: each holds megabytes of window and hash tables, and a dozen at once (GraphiQL's
 * files, a first load) grew the process by 50 MB that the allocator kept; one at a time, by a few MB.
 */
let compressing: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(work: () => Promise<T>): Promise<T> {
  const run = compressing.then(work, work);
  compressing = run.catch(() => undefined);
  return run;
}

/** Answers `asset` (200 in the best encoding the client accepts, or 304); `headers` are the page's own (its CSP). */
export function sendAsset(ctx: Koa.Context, asset: StaticAsset, headers: Record<string, string> = {}): void {
  // Ours, not the client's order: browsers list `gzip, deflate, br` with equal weights, and br is the smaller.
  const coding: Coding = (['br', 'gzip'] as const).find((c) => asset.bodies.has(c) && ctx.acceptsEncodings(c) === c) ?? 'identity';
  const chosen = asset.bodies.get(coding)!;
  ctx.set(headers);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cache-Control', CACHE_CONTROL[asset.caching]);
  if (asset.bodies.size > 1) ctx.vary('Accept-Encoding');
  ctx.set('ETag', chosen.etag);
  ctx.type = asset.type;
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  if (coding !== 'identity') ctx.set('Content-Encoding', coding);
  ctx.body = chosen.body;
}
