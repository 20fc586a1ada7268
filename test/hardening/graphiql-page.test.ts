import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect } from 'vitest';
import { appTest, onPostgres } from '../support/kit.ts';

/**
 * Finding 1 of issue 31: `GET /graphql` in a browser answered one 9 MB uncompressed page, uncached. GraphiQL is now a
 * small shell whose files are content-hashed, compressed once, immutable and revalidated with 304; /docs and /console
 * are served the same way (src/http/static-asset.ts).
 */
const test = appTest();

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET whose body is kept as sent (fetch would decode it). */
function get(origin: string, path: string, headers: Record<string, string> = {}): Promise<Raw> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    request({ host: hostname, port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

const decoded = (r: Raw): Buffer =>
  r.headers['content-encoding'] === 'br'
    ? brotliDecompressSync(r.body)
    : r.headers['content-encoding'] === 'gzip'
      ? gunzipSync(r.body)
      : r.body;

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

// Pages and their files do not touch the database: the PGlite pass proves them.
describe.skipIf(onPostgres())('GraphiQL: a small shell and hashed, compressed, immutable files', () => {
  test('the page is a shell under 4 KB, revalidated by ETag, whose files sit under /graphql/assets/ named by content hash', {
    timeout: 300_000,
  }, async ({ app: t }) => {
    const shell = await get(t.origin, '/graphql', { ...HTML, 'accept-encoding': 'identity' });
    expect(shell.status).toBe(200);
    expect(shell.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(shell.body.length).toBeLessThan(4096);
    expect(shell.headers['cache-control']).toBe('no-cache');
    expect(shell.headers['content-security-policy']).toContain("script-src 'self'");
    const etag = shell.headers.etag as string;
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    const again = await get(t.origin, '/graphql', { ...HTML, 'accept-encoding': 'identity', 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);

    const html = shell.body.toString();
    expect(html).not.toContain('<style');
    expect(html).not.toMatch(/<script>/); // no inline script: every file is fetched by URL
    const files = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(files.length).toBeGreaterThanOrEqual(3);
    const init = files.find((f) => f.includes('/init.'))!;
    // The editor workers are named in the init script, not in the page.
    const workers = [
      ...decoded(await get(t.origin, init))
        .toString()
        .matchAll(/"(\/graphql\/assets\/[^"]+)"/g),
    ].map((m) => m[1]!);
    expect(workers).toHaveLength(3);
    let total = 0;
    for (const file of [...files, ...workers]) {
      expect(file).toMatch(/^\/graphql\/assets\/[a-z.]+\.[0-9a-f]{20}\.[a-z]+$/);
      const plain = await get(t.origin, file, { 'accept-encoding': 'identity' });
      expect(plain.status, file).toBe(200);
      expect(plain.headers['cache-control'], file).toBe('public, max-age=31536000, immutable');
      expect(plain.headers['content-encoding'], file).toBeUndefined();
      total += plain.body.length;
      if (file.endsWith('.ico') || plain.body.length < 1024) continue; // too small to gain from compression
      const br = await get(t.origin, file, { 'accept-encoding': 'gzip, deflate, br' });
      expect(br.headers['content-encoding'], file).toBe('br');
      expect(br.headers.vary, file).toMatch(/accept-encoding/i);
      expect(br.body.length, file).toBeLessThan(plain.body.length / 2);
      expect(decoded(br).equals(plain.body), file).toBe(true);
      const gz = await get(t.origin, file, { 'accept-encoding': 'gzip' });
      expect(gz.headers['content-encoding'], file).toBe('gzip');
      expect(decoded(gz).equals(plain.body), file).toBe(true);
      // Each encoding has its own ETag; a matching If-None-Match is 304 with no body.
      expect(br.headers.etag).not.toBe(plain.headers.etag);
      const fresh = await get(t.origin, file, { 'accept-encoding': 'br', 'if-none-match': br.headers.etag as string });
      expect(fresh.status, file).toBe(304);
      expect(fresh.body.length).toBe(0);
    }
    expect(total).toBeGreaterThan(5_000_000); // GraphiQL is all there, only no longer in one page
    expect((await get(t.origin, '/graphql/assets/graphiql.0000000000000000000a.js')).status).toBe(404);
  });

  test('GraphQL itself is unchanged: a GET without text/html is still a query', async ({ app: t }) => {
    const res = await get(t.origin, '/graphql?query=%7B__typename%7D', { accept: 'application/json' });
    expect(res.status).toBe(401); // a query, authenticated as ever, not a page
    expect(JSON.parse(res.body.toString()).errors[0].extensions.code).toBe('platform_token_required');
  });

  test('/docs and /console serve their files the same way: compressed, with an ETag, 304 when unchanged', async ({ app: t }) => {
    for (const path of ['/docs', '/docs/swagger-ui-bundle.js', '/console', '/console/console.css']) {
      const res = await get(t.origin, path, { 'accept-encoding': 'br' });
      expect(res.status, path).toBe(200);
      expect(res.headers['cache-control'], path).toBe('no-cache');
      if (path.endsWith('.js')) expect(res.headers['content-encoding'], path).toBe('br');
      const fresh = await get(t.origin, path, { 'accept-encoding': 'br', 'if-none-match': res.headers.etag as string });
      expect(fresh.status, path).toBe(304);
    }
  });
});
