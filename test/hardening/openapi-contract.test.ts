import { describe, expect } from 'vitest';
import { ALL_SCOPES } from '../../src/domain/scope/catalogue.ts';
import { appTest, buildOrg, buildToken, rawRequest, WIDE_OPEN_LIMITS } from '../support/kit.ts';

/**
 * The other half of the OpenAPI contract (the fuzz suite checks that every answer's status and headers are
 * documented): every limit the documents declare on a request is enforced. For each operation, each documented
 * `maxLength` of a query parameter or top-level body field, and each body array's `maxItems`, is exceeded by one,
 * alone in an otherwise empty request with a credential that holds every scope: the answer is 400 naming that field
 * (Surface B's envelope carries `param`; Surface A's message names it).
 */
const test = appTest({ config: WIDE_OPEN_LIMITS });

type Schema = {
  type?: string | string[];
  maxLength?: number;
  maxItems?: number;
  minItems?: number;
  minimum?: number;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  anyOf?: Schema[];
  items?: Schema;
  required?: string[];
  properties?: Record<string, Schema>;
};
interface Limit {
  op: string;
  method: string;
  path: string;
  security: string;
  where: 'query' | 'body';
  name: string;
  value: unknown;
  /** The body's other required fields, with plausible values: so the answer can only be about this field. */
  rest: Record<string, unknown>;
}

/** A value a field's schema accepts in form (never a real id: lookups come after validation). */
function plausible(s: Schema | undefined, name: string): unknown {
  if (!s) return 'a';
  if (s.const !== undefined) return s.const;
  if (s.enum?.length) return s.enum[0];
  if (s.anyOf?.length) return plausible(s.anyOf.find((a) => a.type !== 'null') ?? s.anyOf[0], name);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'integer' || type === 'number') return Math.max(1, s.minimum ?? 1);
  if (type === 'boolean') return true;
  if (type === 'array') return Array.from({ length: s.minItems ?? 0 }, () => plausible(s.items, name));
  if (type === 'object') return Object.fromEntries((s.required ?? []).map((k) => [k, plausible(s.properties?.[k], k)]));
  if (s.format === 'uri' || name === 'url') return 'https://example.com/hook';
  if (s.format === 'date-time') return '2030-01-01T00:00:00Z';
  return 'a';
}

/** The bounded form of a schema: itself, or the first alternative of a union that declares a bound. */
const bounded = (s: Schema | undefined): Schema | undefined =>
  s?.maxLength !== undefined || s?.maxItems !== undefined ? s : s?.anyOf?.map(bounded).find(Boolean);

function limitsOf(doc: any, prefix: string): Limit[] {
  const limits: Limit[] = [];
  for (const [template, methods] of Object.entries<any>(doc.paths)) {
    // Path parameters are filled with an id that exists nowhere: the limit must be refused before the lookup.
    const path = prefix + template.replace(/\{[a-z_]+\}/g, 'zz_00000000000000000000000000000000');
    for (const [method, op] of Object.entries<any>(methods)) {
      if (method === 'options') continue;
      const security = Object.keys(op.security?.[0] ?? {})[0] ?? 'none';
      const base = { op: `${method.toUpperCase()} ${prefix}${template}`, method: method.toUpperCase(), path, security };
      for (const p of op.parameters ?? []) {
        const s = bounded(p.schema);
        if (p.in === 'query' && s?.maxLength !== undefined)
          limits.push({ ...base, where: 'query', name: p.name, value: 'q'.repeat(s.maxLength + 1), rest: {} });
      }
      const body: Schema | undefined = op.requestBody?.content?.['application/json']?.schema;
      for (const [name, prop] of Object.entries(body?.properties ?? {})) {
        const s = bounded(prop);
        const rest = Object.fromEntries(
          (body?.required ?? []).filter((k) => k !== name).map((k) => [k, plausible(body?.properties?.[k], k)]),
        );
        if (s?.maxLength !== undefined) limits.push({ ...base, where: 'body', name, value: 'b'.repeat(s.maxLength + 1), rest });
        else if (s?.maxItems !== undefined)
          limits.push({
            ...base,
            where: 'body',
            name,
            value: Array.from({ length: s.maxItems + 1 }, () => plausible(s.items, name)),
            rest,
          });
      }
    }
  }
  return limits;
}

describe('every limit the OpenAPI documents declare is enforced', () => {
  test('a value one over its documented bound is 400 naming the field, on every operation', { timeout: 240_000 }, async ({ app }) => {
    const org = await buildOrg(app);
    const { secret } = await buildToken(app, org, [...ALL_SCOPES]);
    const credential: Record<string, string | undefined> = {
      platformToken: secret,
      userToken: org.userToken,
      operatorToken: app.operatorToken,
      none: undefined,
    };
    const docs = await Promise.all(['/api/openapi.json', '/v1/platform/openapi.json', '/openapi.json'].map((p) => app.http.get(p)));
    const limits = [...limitsOf(docs[0]!.body, '/api'), ...limitsOf(docs[1]!.body, '/v1/platform'), ...limitsOf(docs[2]!.body, '')].filter(
      (l) => credential[l.security] !== undefined || l.security === 'none',
    );
    expect(limits.length).toBeGreaterThan(100);

    const unenforced: string[] = [];
    for (const l of limits) {
      const token = credential[l.security];
      const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      let path = l.path;
      let body: string | undefined;
      if (l.where === 'query') path += `?${new URLSearchParams({ [l.name]: String(l.value) })}`;
      else {
        body = JSON.stringify({ ...l.rest, [l.name]: l.value });
        headers['content-type'] = 'application/json';
      }
      const res = await rawRequest(app.origin, l.method, path, headers, body);
      const e = res.body?.error;
      const named =
        typeof e === 'object'
          ? e?.param === l.name || String(e?.param ?? '').startsWith(`${l.name}.`)
          : res.body?.message?.includes(l.name);
      if (res.status !== 400 || !named) unenforced.push(`${l.op} ${l.where} ${l.name}: ${res.status} ${res.text.slice(0, 200)}`);
    }
    expect(unenforced).toEqual([]);
  });
});
