import { randomBytes } from 'node:crypto';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Deps } from '../domain/context.ts';
import { DomainError, isDomainError } from '../domain/errors.ts';
import type { PlatformGate } from '../domain/platform/request-auth.ts';
import type { EventStream } from '../domain/event/stream.ts';
import type { GraphQLContext } from './context.ts';
import { toGraphQLError } from './errors.ts';
import { schema } from './schema/index.ts';

export type Yoga = YogaServerInstance<Record<string, unknown>, GraphQLContext>;

function bearerOf(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : '';
}

/**
 * graphql-yoga over the Pothos schema. Every operation is authenticated by
 * the Surface B pipeline in the context factory (HTTP and graphql-ws alike);
 * error masking stays on and only catalogued DomainErrors pass through, with
 * their `code` in `extensions`.
 */
export function createGraphQL(deps: Deps, gate: PlatformGate, stream: EventStream, log: Logger): Yoga {
  return createYoga<Record<string, unknown>, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    landingPage: false,
    graphiql: { title: 'Platform API', headers: JSON.stringify({ Authorization: 'Bearer sk_platform_live_...' }) },
    plugins: [requestIdOnErrors()],
    maskedErrors: {
      maskError(error, message) {
        const original = (error as { originalError?: unknown }).originalError ?? error;
        if (isDomainError(original)) return toGraphQLError(original, requestIdOf(error));
        if (original && (original as { extensions?: { code?: string } }).extensions?.code) return error as Error;
        log.error({ err: original }, 'unhandled GraphQL error');
        return toGraphQLError(new DomainError('internal_error', message), requestIdOf(error));
      },
    },
    context: async ({ request, connectionParams, requestId: httpRequestId }: { request?: Request; connectionParams?: Record<string, unknown>; requestId?: string }) => {
      // HTTP requests reuse the Koa request id (also in the Request-Id header); WebSocket operations get their own.
      const requestId = httpRequestId ?? `req_${randomBytes(12).toString('hex')}`;
      const header = (name: string) => {
        const fromWs = connectionParams?.[name] ?? connectionParams?.[name.toLowerCase()];
        return typeof fromWs === 'string' ? fromWs : (request?.headers.get(name) ?? null);
      };
      try {
        const caller = await gate.authorize({
          bearer: bearerOf(header('authorization')),
          brand: header('service-brand') ?? undefined,
        });
        return { deps, gate, stream, caller, requestId, idempotencyKey: header('idempotency-key') ?? undefined };
      } catch (e) {
        if (isDomainError(e)) throw toGraphQLError(e, requestId, true);
        throw e;
      }
    },
  }) as Yoga;
}

function requestIdOf(error: unknown): string {
  return ((error as { extensions?: { request_id?: string } }).extensions?.request_id as string) ?? 'unknown';
}

/**
 * Resolver errors are masked without access to the request; stamp the HTTP
 * request id onto them as the result is written, so GraphQL errors carry the
 * same `request_id` as the `Request-Id` header and REST envelopes.
 */
function requestIdOnErrors() {
  type Result = { errors?: readonly { extensions?: Record<string, unknown> }[] };
  const stamp = (id: string, result: Result) => {
    for (const e of result.errors ?? []) if (e.extensions?.request_id === 'unknown') e.extensions.request_id = id;
  };
  return {
    onResultProcess: ({ result, serverContext }: { result: unknown; serverContext: { requestId?: string } }) => {
      const id = serverContext.requestId;
      if (!id || (result && typeof result === 'object' && Symbol.asyncIterator in result)) return;
      for (const r of Array.isArray(result) ? result : [result]) if (r) stamp(id, r as Result);
    },
  };
}
