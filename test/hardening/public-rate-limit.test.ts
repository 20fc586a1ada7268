import { request } from 'node:http';
import { describe, expect } from 'vitest';
import { appTest } from '../support/kit.ts';

/**
 * Finding 1 of issue 31: the unauthenticated routes (the scope registry, the OpenAPI documents, the pages and their
 * files) share a bucket per client address (PUBLIC_RATE_LIMIT_*); the health probes never spend from it. The test
 * clock does not move, so nothing refills.
 */
const BURST = 6;
const test = appTest({ config: { publicRateLimit: { perSecond: 1, burst: BURST } } });

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A GET from the loopback address `from` (the client socket is bound to it). */
function getFrom(from: string, origin: string, path: string, headers: Record<string, string> = {}): Promise<Raw> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    request({ host: hostname, port, path, headers, localAddress: from, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    })
      .on('error', reject)
      .end();
  });
}

describe('the unauthenticated routes: a bucket per client address', () => {
  test('one address is refused past its burst with 429 rate_limited in its surface’s envelope while another is served; /healthz never', {
    timeout: 120_000,
  }, async ({ app: t }) => {
    const A = '127.0.0.3';
    const B = '127.0.0.2';
    // Every kind of unauthenticated route spends from the same bucket.
    const paths = ['/api/scopes', '/openapi.json', '/v1/platform/openapi.json', '/docs', '/console/console.css', '/api/openapi.json'];
    for (const path of paths) {
      const res = await getFrom(A, t.origin, path);
      expect(res.status, path).toBe(200);
      expect(res.headers['ratelimit-limit'], path).toBe(String(BURST));
    }

    const scopes = await getFrom(A, t.origin, '/api/scopes');
    expect(scopes.status).toBe(429);
    expect(JSON.parse(scopes.text)).toMatchObject({ error: 'rate_limited', request_id: scopes.headers['request-id'] });
    expect(Number(scopes.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(scopes.headers['ratelimit-remaining']).toBe('0');
    expect(scopes.headers['ratelimit-limit']).toBe(String(BURST));

    const surfaceB = await getFrom(A, t.origin, '/v1/platform/openapi.json');
    expect(surfaceB.status).toBe(429);
    expect(JSON.parse(surfaceB.text).error).toMatchObject({ code: 'rate_limited' });

    for (const [path, headers] of [
      ['/docs', {}],
      ['/graphql', { accept: 'text/html' }],
      ['/graphql/assets/graphiql.0000000000000000000a.js', {}],
    ] as const) {
      const page = await getFrom(A, t.origin, path, headers);
      expect(page.status, path).toBe(429);
      expect(page.headers['content-type'], path).toMatch(/^application\/json/);
      expect(JSON.parse(page.text).error, path).toBe('rate_limited');
    }

    // The health probes are never limited, from the refused address too.
    for (let i = 0; i < BURST * 3; i++) {
      expect((await getFrom(A, t.origin, '/healthz')).status).toBe(200);
      expect((await getFrom(A, t.origin, '/readyz')).status).toBe(200);
    }
    // Another address still has its whole bucket.
    const other = await getFrom(B, t.origin, '/api/scopes');
    expect(other.status).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe(String(BURST - 1));
    // Routes with a credential of their own do not spend from it: a request with a token is limited by the token's bucket.
    expect((await getFrom(A, t.origin, '/v1/platform/events')).status).toBe(401);
  });
});
