import { z } from 'zod';
import { MAX_INPUT_ITEMS, MAX_INPUT_KEY, MAX_INPUT_STRING } from '../../src/domain/input-guard.ts';
import { MAX_QUERY_VALUE } from './input-guard.ts';
import type { Auth, RouteDef } from './route.ts';

/** OpenAPI 3.1 built from route declarations and their zod schemas. */
export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  errorSchema: Record<string, unknown>;
  /** Documents the `Service-Brand` header on every platform-token route (Surface B). */
  brandHeader?: boolean;
}

/** The Surface B brand selector, one component referenced by every platform-token operation. */
const SERVICE_BRAND = {
  name: 'Service-Brand',
  in: 'header',
  required: false,
  description:
    "Selects one of the organization's brands by id (`brand_...`) or slug; default: its oldest brand. Brand-scoped resources (programs, enrollments, assertions' entities, distributions and their wallet) are read and written in it; organization-scoped ones (webhook endpoints, the event feed, operations) ignore it. A brand that is not the organization's (unknown, or another organization's: the answer is the same) is 400 `brand_not_found` naming `Service-Brand`.",
  schema: { type: 'string', maxLength: 255 },
};

const toSchema = (s: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;

function stripMeta(s: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = s;
  return rest;
}

const SECURITY: Record<string, Record<string, string[]>[] | undefined> = {
  none: [],
  platform: [{ platformToken: [] }],
  user: [{ userToken: [] }],
  operator: [{ operatorToken: [] }],
  publishable: [{ publishableKey: [] }],
};

const SECURITY_SCHEMES = {
  platformToken: { type: 'http', scheme: 'bearer', description: 'Platform token `sk_<brand>_live_...`' },
  userToken: { type: 'http', scheme: 'bearer', description: 'Dashboard user token `ut_...`' },
  operatorToken: { type: 'http', scheme: 'bearer', description: 'Operator token' },
  publishableKey: {
    type: 'http',
    scheme: 'bearer',
    description:
      'Publishable key `pk_live_...` (partner connect only, bound to one brand, CORS from its allowed_origins); status and connect also take the `Connect-Session: cs_...` header that join answers',
  },
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request (every route: a query string or header the input guard refuses, e.g. a NUL byte or a value over its length)',
  401: 'Missing or invalid credentials',
  403: 'The credential may not do this (a missing scope, or a key of the wrong kind)',
  404: 'No such object',
  409: 'Conflict',
  413: 'Body too large',
  415: 'Body is not JSON',
  429: 'Rate limited (the credential, its organization, or failed authentications from this address); retry after Retry-After seconds',
  503: 'Unavailable for a moment (the database is unreachable or cannot write, or the kill switch is engaged); retry after Retry-After seconds',
};

const ERROR_NAME: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  429: 'RateLimited',
  503: 'Unavailable',
};

/**
 * What every route of an auth kind can answer besides its own statuses: the input guard's 400 and the 503 of an
 * unreachable or full database everywhere; 401 and the failed-authentication throttle's 429 wherever a credential is
 * checked; 403 where a credential can lack a scope or be of the wrong kind; the unauthenticated bucket's 429.
 */
const STATUSES_OF: Record<Auth, number[]> = {
  none: [400, 429, 503],
  platform: [400, 401, 403, 429, 503],
  user: [400, 401, 429, 503],
  operator: [400, 401, 429, 503],
  publishable: [400, 401, 403, 429, 503],
};

const header = (description: string, schema: Record<string, unknown>, required = true) => ({ description, required, schema });
const SECONDS = { type: 'integer', format: 'int32', minimum: 0, maximum: 2 ** 31 - 1 };
/** Every response header once, in `components.headers`; a response refers to them (written inline they were most of the document). */
const SENT_BEFORE = ' (sent once the request reached its bucket: not on a refusal before it, e.g. a missing credential)';
const HEADERS = {
  RequestId: header("This request's id, also in error bodies and the server's log line", { type: 'string', maxLength: 64 }),
  RetryAfter: header('Seconds to wait before retrying', SECONDS),
  RateLimitLimit: header("The bucket's size", SECONDS),
  RateLimitRemaining: header('What is left in the bucket after this request', SECONDS),
  RateLimitReset: header('Seconds until the bucket is full again', SECONDS),
  RateLimitLimitIfReached: header(`The bucket's size${SENT_BEFORE}`, SECONDS, false),
  RateLimitRemainingIfReached: header(`What is left in the bucket after this request${SENT_BEFORE}`, SECONDS, false),
  RateLimitResetIfReached: header(`Seconds until the bucket is full again${SENT_BEFORE}`, SECONDS, false),
} satisfies Record<string, ReturnType<typeof header>>;
const ref = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
/** RateLimit-* as every bucket sends them (src/http/rate-limit-headers.ts); `required` false where a refusal can come before the bucket. */
const rateLimitHeaders = (required: boolean) => {
  const when = required ? ('' as const) : ('IfReached' as const);
  return {
    'RateLimit-Limit': ref(`RateLimitLimit${when}`),
    'RateLimit-Remaining': ref(`RateLimitRemaining${when}`),
    'RateLimit-Reset': ref(`RateLimitReset${when}`),
  };
};

/** Whether a route's answers carry RateLimit-*: every credential's bucket and the unauthenticated one; never the probes or the operator. */
const limited = (r: RouteDef) => !r.unlimited && r.auth !== 'operator';

/** The response headers a route sends with `status`. */
function responseHeaders(r: RouteDef, status: number): Record<string, unknown> {
  const headers: Record<string, unknown> = { 'Request-Id': ref('RequestId') };
  if (status === 429 || status === 503) headers['Retry-After'] = ref('RetryAfter');
  if (status === 429) Object.assign(headers, rateLimitHeaders(true));
  else if (limited(r) && status < 300) Object.assign(headers, rateLimitHeaders(true));
  else if (limited(r) && status < 500) Object.assign(headers, rateLimitHeaders(false));
  return headers;
}

type Json = Record<string, unknown>;

/**
 * Declares on a request schema the bounds the input guard enforces on every input (src/domain/input-guard.ts,
 * rest/http/input-guard.ts) wherever the field's own schema sets none, and an integer's width: the document then
 * states every limit the server applies. `stringMax` is the bound of the schema's top-level strings (a query or path
 * parameter's; a body's strings take MAX_INPUT_STRING at every depth).
 */
function declareBounds(schema: unknown, stringMax = MAX_INPUT_STRING): void {
  if (!schema || typeof schema !== 'object') return;
  if (Array.isArray(schema)) {
    for (const s of schema) declareBounds(s, stringMax);
    return;
  }
  const s = schema as Json;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('string') && s.maxLength === undefined && s.enum === undefined && s.const === undefined) s.maxLength = stringMax;
  if (types.includes('array') && s.maxItems === undefined) s.maxItems = MAX_INPUT_ITEMS;
  if (types.includes('integer')) widthOf(s);
  if (types.includes('object') && s.propertyNames === undefined && s.additionalProperties !== undefined && s.additionalProperties !== false)
    s.propertyNames = { type: 'string', maxLength: MAX_INPUT_KEY };
  if (s.propertyNames && typeof s.propertyNames === 'object') {
    const names = s.propertyNames as Json;
    if (names.maxLength === undefined) names.maxLength = MAX_INPUT_KEY;
  }
  for (const [key, value] of Object.entries(s)) if (key !== 'propertyNames' && value && typeof value === 'object') declareBounds(value);
}

/** int32 when the schema's own bounds fit in 32 bits, else int64. */
function widthOf(s: Json): void {
  if (s.format !== undefined) return;
  const lo = (s.minimum ?? s.exclusiveMinimum ?? -Infinity) as number;
  const hi = (s.maximum ?? s.exclusiveMaximum ?? Infinity) as number;
  s.format = lo >= -(2 ** 31) && hi <= 2 ** 31 - 1 ? 'int32' : 'int64';
}

/** A response schema's integers get their width (strings and arrays in answers are bounded by what was accepted). */
function declareWidths(schema: unknown): void {
  if (!schema || typeof schema !== 'object') return;
  if (Array.isArray(schema)) return void schema.forEach(declareWidths);
  const s = schema as Json;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('integer')) widthOf(s);
  for (const value of Object.values(s)) if (value && typeof value === 'object') declareWidths(value);
}

/** What each tag groups, one line; the documents list their tags in this order (then any other, in the order of their routes). */
const TAG_TEXT: Record<string, string> = {
  Scopes: 'The scope registry, the scope executor and the smoke test',
  Units: 'Units: created as drafts, published through the units:publish scope',
  'Webhook endpoints': 'Endpoints, their signing secrets, deliveries, attempts, retries and replays',
  Events: 'The append-only event feed, ordered by seq, and the event type catalogue',
  Operations: 'Long-running work that every real mutation returns',
  Distributions: "Distributions: a budget from the brand's wallet, launched to deployments",
  Deployments: "A distribution's children, run through a provider",
  Assertions: "Facts about entities that drive enrollments' standing",
  Programs: 'Programs, their requirements and tiers',
  Enrollments: "Entities' enrollments in programs and their standing",
  Performance: 'Measurements and their rollups',
  Payouts: 'Payout runs, payouts, the ledger and exports',
  Brands: "The organization's brands",
  Entities: 'Creators and partners, by ent_ id or external_user_id and issuer',
  Relationships: 'An entity and a brand: activate, pause, resume, end',
  Connections: "An entity's accounts at providers",
  'Connect configuration': "A brand's partner-connect settings",
  'Handoff issuers': 'Signers of the handoffs that partner connect verifies',
  'Partner connect': 'The publishable-key routes a partner site calls from the browser',
  'Platform tokens': 'Token management with a dashboard user token',
  Operator: 'The operator interface (OPERATOR_TOKEN)',
  Service: 'Health probes and the OpenAPI documents',
};

const AUTH_TEXT: Record<Auth, string> = {
  none: 'No credential.',
  platform: 'Platform token.',
  user: 'Dashboard user token.',
  operator: 'Operator token.',
  publishable: 'Publishable key.',
};

function tagsOf(routes: RouteDef[]) {
  const used = new Set(routes.map((r) => r.tag));
  const names = [...new Set([...Object.keys(TAG_TEXT).filter((t) => used.has(t)), ...used])];
  return names.map((name) => ({ name, description: TAG_TEXT[name] ?? name }));
}

export function buildOpenApi(info: OpenApiInfo, routes: RouteDef[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemesUsed = new Set<string>();
  // Each error answer once (by status, and whether a bucket's headers come with it); operations refer to them.
  const errorResponses: Record<string, unknown> = {};
  for (const r of routes) {
    for (const requirement of SECURITY[r.auth] ?? []) for (const name of Object.keys(requirement)) schemesUsed.add(name);
    const path = r.path.replace(/:([a-z_]+)/gi, '{$1}');
    const parameters: unknown[] = [...r.path.matchAll(/:([a-z_]+)/gi)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      // No id, slug or type name is longer; a longer one matches nothing (404).
      schema: { type: 'string', maxLength: MAX_INPUT_KEY },
    }));
    if (r.query) {
      const qs = stripMeta(toSchema(r.query, 'input'));
      const props = (qs.properties ?? {}) as Record<string, unknown>;
      const required = new Set((qs.required as string[] | undefined) ?? []);
      for (const [name, schema] of Object.entries(props)) {
        declareBounds(schema, MAX_QUERY_VALUE);
        parameters.push({ name, in: 'query', required: required.has(name), schema });
      }
    }
    if (info.brandHeader && r.auth === 'platform') parameters.push({ $ref: '#/components/parameters/ServiceBrand' });
    if (r.idempotent) {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: 'Replays the stored response for 24 h; reusing it with a different body is refused.',
        schema: { type: 'string', maxLength: 255 },
      });
    }
    let requestBody: unknown;
    if (r.body) {
      const schema = stripMeta(toSchema(r.body, 'input'));
      if (r.deprecatedBodyFields) {
        const props = { ...((schema.properties ?? {}) as Record<string, unknown>) };
        for (const [name, description] of Object.entries(r.deprecatedBodyFields))
          props[name] = { type: 'string', deprecated: true, description };
        schema.properties = props;
      }
      declareBounds(schema);
      requestBody = {
        required: r.method === 'POST' && Boolean((schema.required as string[] | undefined)?.length),
        content: { 'application/json': { schema } },
      };
    }
    const output = (schema: z.ZodType) => {
      const json = stripMeta(toSchema(schema, 'output'));
      declareWidths(json);
      return json;
    };
    const responses: Record<string, unknown> = {
      [r.success.status]: {
        description: r.success.description,
        headers: responseHeaders(r, r.success.status),
        content: {
          [r.success.contentType ?? 'application/json']: {
            schema: r.success.schema ? output(r.success.schema) : { type: 'object' },
          },
        },
      },
    };
    for (const o of r.otherResponses ?? []) {
      responses[o.status] = {
        description: o.description,
        headers: responseHeaders(r, o.status),
        content: { 'application/json': { schema: output(o.schema) } },
      };
    }
    // The probes touch no bucket and (liveness) no database: only the input guard's 400 and their own answers.
    // Every POST reads its body, even one that takes no field: too large is 413, not JSON is 415.
    const bodyStatuses = r.method === 'POST' ? [413, 415] : [];
    const statuses = [...new Set([...(r.unlimited ? [400] : STATUSES_OF[r.auth]), ...bodyStatuses, ...r.errors])].sort();
    for (const status of statuses) {
      if (responses[status]) continue;
      const name = `${ERROR_NAME[status] ?? `Error${status}`}${limited(r) ? '' : 'Unmetered'}`;
      errorResponses[name] ??= {
        description: STATUS_TEXT[status] ?? 'Error',
        headers: responseHeaders(r, status),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
      responses[status] = { $ref: `#/components/responses/${name}` };
    }
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.tag],
      description: r.scope ? `${r.summary}. Requires scope \`${r.scope}\`.` : `${r.summary}. ${AUTH_TEXT[r.auth]}`,
      ...(r.scope ? { 'x-required-scope': r.scope } : {}),
      security: SECURITY[r.auth],
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
    };
  }
  const referenced = JSON.stringify([paths, errorResponses]);
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      description: info.description,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      contact: { name: 'Platform API', url: `${new URL(info.serverUrl).origin}/docs` },
    },
    // A private API: its servers are for the operator's own tenants and tools.
    servers: [{ url: info.serverUrl, 'x-internal': true }],
    tags: tagsOf(routes),
    paths,
    components: {
      securitySchemes: Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([name]) => schemesUsed.has(name))),
      ...(info.brandHeader ? { parameters: { ServiceBrand: SERVICE_BRAND } } : {}),
      responses: errorResponses,
      headers: Object.fromEntries(Object.entries(HEADERS).filter(([name]) => referenced.includes(`#/components/headers/${name}"`))),
      schemas: { Error: info.errorSchema },
    },
  };
}
