import { z } from 'zod';
import type { RouteDef } from './route.ts';

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
  400: 'Invalid request (every route: a query string or header the input guard refuses, e.g. a NUL byte)',
  401: 'Missing or invalid credentials',
  403: 'Credential lacks a required scope',
  404: 'No such object',
  409: 'Conflict',
  413: 'Body too large',
  415: 'Body is not JSON',
  429: 'Rate limited',
  503: 'Unavailable (kill switch engaged)',
};

export function buildOpenApi(info: OpenApiInfo, routes: RouteDef[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemesUsed = new Set<string>();
  for (const r of routes) {
    for (const requirement of SECURITY[r.auth] ?? []) for (const name of Object.keys(requirement)) schemesUsed.add(name);
    const path = r.path.replace(/:([a-z_]+)/gi, '{$1}');
    const parameters: unknown[] = [...r.path.matchAll(/:([a-z_]+)/gi)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (r.query) {
      const qs = stripMeta(toSchema(r.query, 'input'));
      const props = (qs.properties ?? {}) as Record<string, unknown>;
      const required = new Set((qs.required as string[] | undefined) ?? []);
      for (const [name, schema] of Object.entries(props)) parameters.push({ name, in: 'query', required: required.has(name), schema });
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
      requestBody = {
        required: r.method === 'POST' && Boolean((schema.required as string[] | undefined)?.length),
        content: { 'application/json': { schema } },
      };
    }
    const responses: Record<string, unknown> = {
      [r.success.status]: {
        description: r.success.description,
        content: {
          [r.success.contentType ?? 'application/json']: {
            schema: r.success.schema ? stripMeta(toSchema(r.success.schema, 'output')) : { type: 'object' },
          },
        },
      },
    };
    for (const o of r.otherResponses ?? []) {
      responses[o.status] = {
        description: o.description,
        content: { 'application/json': { schema: stripMeta(toSchema(o.schema, 'output')) } },
      };
    }
    // The input guard answers 400 on every route, whatever else it documents.
    for (const status of new Set([400, ...r.errors])) {
      responses[status] = {
        description: STATUS_TEXT[status] ?? 'Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    paths[path] ??= {};
    paths[path][r.method.toLowerCase()] = {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.tag],
      ...(r.scope ? { description: `Requires scope \`${r.scope}\`.`, 'x-required-scope': r.scope } : {}),
      security: SECURITY[r.auth],
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      description: info.description,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: info.serverUrl }],
    paths,
    components: {
      securitySchemes: Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([name]) => schemesUsed.has(name))),
      ...(info.brandHeader ? { parameters: { ServiceBrand: SERVICE_BRAND } } : {}),
      schemas: { Error: info.errorSchema },
    },
  };
}
