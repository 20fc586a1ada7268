import Router from '@koa/router';
import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { routeMayMatch } from '../../rest/http/route.ts';
import { appTest } from '../support/kit.ts';

/**
 * Every router matches a request against only the layers its path's first
 * segments could reach (rest/http/route.ts). That must be exactly the
 * library's own loop over every layer: same layers, same order, same verdict,
 * for every route, its near misses (case, trailing slash, extra or missing
 * segments, encodings) and random paths built from the routes' own segments.
 */
const test = appTest();

type Routed = Router & { match: Router['match'] };
const routersOf = (koa: { middleware: unknown[] }): Routed[] => {
  const found: Routed[] = [];
  // routesOf() names its router, as the library's own dispatch does.
  for (const mw of koa.middleware as { router?: Routed }[]) if (mw.router) found.push(mw.router);
  return found;
};

const METHODS = ['GET', 'POST', 'DELETE', 'OPTIONS', 'PUT', 'get'];

function nearMisses(path: string): string[] {
  const filled = path.replace(/:[a-z_]+/gi, 'x_1').replace(/\{\*[a-z]+\}/gi, 'a/b');
  return [
    filled,
    `${filled}/`,
    filled.toUpperCase(),
    `${filled}/extra`,
    filled.slice(0, filled.lastIndexOf('/')) || '/',
    filled.replace(/\//g, '//'),
    filled.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`),
    `${filled}%2F`,
  ];
}

describe('the layer index of the REST routers', () => {
  test('matches exactly as @koa/router matches every layer', ({ app: t }) => {
    const routers = routersOf(t.app.koa as never);
    expect(routers.length).toBeGreaterThanOrEqual(4);
    const segments = new Set<string>(['', 'x', 'v1', 'platform', 'api', '*', '..', '%00']);
    const paths = new Set<string>(['/', '', '*', '/v1', '/v1/platform', '/v1/platform/', '/api', '/api/']);
    for (const router of routers)
      for (const layer of router.stack) {
        if (typeof layer.path !== 'string') continue;
        for (const p of nearMisses(layer.path)) paths.add(p);
        for (const s of layer.path.split('/')) segments.add(s);
      }
    const same = (path: string) => {
      for (const router of routers)
        for (const method of METHODS) {
          const indexed = router.match(path, method);
          const full = Router.prototype.match.call(router, path, method);
          // A router skipped for this path (routesOf) is one whose own dispatch would have found no route.
          if (full.route && !routeMayMatch(router, path)) return false;
          if (
            indexed.route !== full.route ||
            indexed.path.length !== full.path.length ||
            indexed.path.some((l, i) => l !== full.path[i]) ||
            indexed.pathAndMethod.some((l, i) => l !== full.pathAndMethod[i]) ||
            indexed.pathAndMethod.length !== full.pathAndMethod.length
          )
            return false;
        }
      return true;
    };
    let matched = 0;
    for (const p of paths) {
      expect(same(p), p).toBe(true);
      if (routers.some((r) => r.match(p, 'GET').route || r.match(p, 'POST').route)) matched++;
    }
    // The corpus reaches real routes, not only misses.
    expect(matched).toBeGreaterThan(100);
    const vocabulary = [...segments].map((s) => s.replace(/^:[a-z_]+$/i, 'id_1'));
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...vocabulary), { minLength: 0, maxLength: 6 }), fc.boolean(), (segs, slash) =>
        same(`/${segs.join('/')}${slash ? '/' : ''}`),
      ),
      { numRuns: 3000 },
    );
  });
});
