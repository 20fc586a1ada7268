import { z } from 'zod';
import type { RouteDef } from './route.ts';

/** OpenAPI 3.1 built from route declarations and their zod schemas. */
export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  errorSchema: Record<string, unknown>;
}

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
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request',
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
  for (const r of routes) {
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
          'application/json': { schema: r.success.schema ? stripMeta(toSchema(r.success.schema, 'output')) : { type: 'object' } },
        },
      },
    };
    for (const o of r.otherResponses ?? []) {
      responses[o.status] = {
        description: o.description,
        content: { 'application/json': { schema: stripMeta(toSchema(o.schema, 'output')) } },
      };
    }
    for (const status of r.errors) {
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
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.serverUrl }],
    paths,
    components: {
      securitySchemes: {
        platformToken: { type: 'http', scheme: 'bearer', description: 'Platform token `sk_<brand>_live_...`' },
        userToken: { type: 'http', scheme: 'bearer', description: 'Dashboard user token `ut_...`' },
        operatorToken: { type: 'http', scheme: 'bearer', description: 'Operator token' },
      },
      schemas: { Error: info.errorSchema },
    },
  };
}
