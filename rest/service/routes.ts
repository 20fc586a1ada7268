import { z } from 'zod';
import type { Database } from '../../src/db/database.ts';
import type { ServiceUrls } from '../../src/domain/organization/bootstrap.ts';
import { sendAsset, staticAsset, type StaticAsset } from '../../src/http/static-asset.ts';
import { buildOpenApi } from '../http/openapi.ts';
import type { RouteDef } from '../http/route.ts';
import { ErrorEnvelope } from '../platform/schemas.ts';
import { ErrorResponse } from '../surface-a/schemas.ts';

/**
 * The routes every deployment answers outside the two API surfaces: health
 * probes and the OpenAPI documents. Three documents, one per base URL and
 * error envelope: Surface A (`/api`), Surface B (`/v1/platform`), and the
 * dashboard and operations routes at the origin (token management, operator,
 * these routes themselves), so every mounted route is in exactly one.
 */
export interface ServiceDocuments {
  urls: () => ServiceUrls;
  surfaceA: RouteDef[];
  platform: RouteDef[];
  dashboard: RouteDef[];
  specVersion: string;
}

const Health = z.object({ ok: z.literal(true) });
const Readiness = z.object({ ok: z.boolean(), database: z.enum(['pglite', 'postgres']) });
const OpenApiDocument = z
  .object({ openapi: z.string(), info: z.object({}).passthrough(), paths: z.record(z.string(), z.unknown()) })
  .passthrough();

export function serviceRoutes(db: Database, docs: ServiceDocuments): RouteDef[] {
  const surfaceB = () =>
    buildOpenApi(
      {
        title: 'Platform API, Surface B',
        version: '1',
        description:
          'Webhook endpoints, the event feed, assertions and operations. Bearer platform token; Idempotency-Key on every mutation; errors as { error: { code, message, param, request_id } }.',
        serverUrl: `${docs.urls().api_origin}/v1/platform`,
        errorSchema: ErrorEnvelope,
        brandHeader: true,
      },
      docs.platform,
    );
  const surfaceA = () =>
    buildOpenApi(
      {
        title: 'Platform API, Surface A (scope executor)',
        version: docs.specVersion,
        description:
          'Scope registry, scope executor, smoke test and units. Token management lives at the dashboard base URL. 429 rate_limited (a bucket per token and one per organization, with Retry-After and RateLimit-* headers) is an extension to the spec, which lists 400, 401 and 403.',
        serverUrl: docs.urls().base_url,
        errorSchema: ErrorResponse,
      },
      docs.surfaceA,
    );
  const dashboard = () =>
    buildOpenApi(
      {
        title: 'Platform API, dashboard and operations',
        version: docs.specVersion,
        description:
          'Token management (dashboard user token), the operator interface (operator token), health probes and the OpenAPI documents. Errors as { error, message, request_id }.',
        serverUrl: docs.urls().dashboard_base_url,
        errorSchema: ErrorResponse,
      },
      [...docs.dashboard, ...routes],
    );
  const document = (path: string, operationId: string, summary: string, build: () => unknown): RouteDef => {
    let asset: Promise<StaticAsset> | undefined;
    return {
      method: 'GET',
      path,
      operationId,
      summary,
      tag: 'Service',
      auth: 'none',
      success: { status: 200, description: 'OpenAPI 3.1 document', schema: OpenApiDocument },
      errors: [],
      // Built, serialized and compressed once, at the first request (the URLs are known once the server listens): the
      // Surface B document is about 2 MB, which a public route must not rebuild per request.
      handler: async (ctx) => {
        asset ??= staticAsset(JSON.stringify(build()), 'application/json; charset=utf-8', 'revalidate');
        sendAsset(ctx, await asset);
      },
    };
  };
  const routes: RouteDef[] = [
    {
      method: 'GET',
      path: '/healthz',
      operationId: 'health',
      summary: 'Liveness: the process answers',
      tag: 'Service',
      auth: 'none',
      unlimited: true,
      success: { status: 200, description: 'Up', schema: Health },
      errors: [],
      handler: async (ctx) => {
        ctx.body = { ok: true };
      },
    },
    {
      method: 'GET',
      path: '/readyz',
      operationId: 'readiness',
      summary: 'Readiness: the database answers and, after a storage fault, accepts writes again',
      tag: 'Service',
      auth: 'none',
      unlimited: true,
      success: { status: 200, description: 'Ready', schema: Readiness },
      otherResponses: [{ status: 503, description: 'The database does not answer, or cannot store data', schema: Readiness }],
      errors: [],
      handler: async (ctx) => {
        try {
          await db.ready();
          ctx.body = { ok: true, database: db.kind };
        } catch {
          ctx.status = 503;
          ctx.body = { ok: false, database: db.kind };
        }
      },
    },
    document('/openapi.json', 'dashboardOpenApi', 'This document: token management, operator routes, health', dashboard),
    document('/api/openapi.json', 'surfaceAOpenApi', 'The Surface A document', surfaceA),
    document('/v1/platform/openapi.json', 'surfaceBOpenApi', 'The Surface B document', surfaceB),
  ];
  return routes;
}
