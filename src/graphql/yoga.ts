import { getOperationAST, type ExecutionArgs, type GraphQLError } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { Deps } from '../domain/context.ts';
import type { Metrics } from '../metrics.ts';
import { tracing } from '../tracing.ts';
import { databaseUnavailable, DomainError, isDomainError } from '../domain/errors.ts';
import { newRequestId } from '../domain/id.ts';
import { guardInput } from '../domain/input-guard.ts';
import type { PlatformGate } from '../runtime/platform-gate.ts';
import type { ClientKey } from '../domain/token/failed-authentication.ts';
import type { EventStream } from '../runtime/event-stream.ts';
import type { GraphQLContext } from './context.ts';
import { compiledExecution } from './compiled.ts';
import { asInvalidRequest, isRequestError, toGraphQLError, withRequestId } from './errors.ts';
import { inputGuard } from './input-guard.ts';
import { sseEventIds } from './sse.ts';
import { endStreamsWhenAccessEnds } from './stream-authority.ts';
import { graphqlLimits, type CostContext } from './limits.ts';
import { schema } from './schema/index.ts';
import { bearerOf } from '../http/request-body.ts';

export type Yoga = YogaServerInstance<Record<string, unknown>, GraphQLContext>;

/**
 * graphql-yoga over the Pothos schema. Every operation is authenticated by
 * the Surface B pipeline in the context factory (HTTP and graphql-ws alike);
 * error masking stays on and only catalogued DomainErrors pass through, with
 * their `code` in `extensions`. Request errors (variables that do not
 * coerce, documents that do not parse or validate, an unknown operation) are
 * the client's: `invalid_request`, never logged as server errors.
 */
export function createGraphQL(deps: Deps, gate: PlatformGate, stream: EventStream, log: Logger): Yoga {
  return createYoga<Record<string, unknown>, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    landingPage: false,
    // GraphiQL is its own page (src/graphql/graphiql.ts); cross-origin requests are refused before Yoga (src/http/cors.ts).
    graphiql: false,
    cors: false,
    plugins: [
      ...graphqlLimits(deps.config.graphqlLimits),
      catalogueCodesOnErrors(),
      inputGuard(),
      compiledExecution(),
      sseEventIds(),
      endStreamsWhenAccessEnds(),
      countOperations(deps.metrics),
      traceOperations(),
    ],
    maskedErrors: { maskError: maskGraphQLError(log, deps.db) },
    context: async ({
      request,
      connectionParams,
      requestId: httpRequestId,
      requestCost,
      koaState,
      client,
    }: {
      request?: Request;
      connectionParams?: Record<string, unknown>;
      requestId?: string;
      /** The HTTP request's Koa state: the caller and a refusal's code go to its log line (rest/http/request-id.ts). */
      koaState?: { caller?: unknown; errorCode?: string; idempotentReplayed?: boolean; client?: ClientKey };
      /** A graphql-ws connection's client address key (an HTTP request's is in koaState). */
      client?: ClientKey;
    } & CostContext) => {
      // HTTP requests reuse the Koa request id (also in the Request-Id header); graphql-ws operations bring theirs (src/graphql/ws.ts).
      const requestId = httpRequestId ?? newRequestId();
      const header = (name: string) => {
        const fromWs = connectionParams?.[name] ?? connectionParams?.[name.toLowerCase()];
        if (typeof fromWs !== 'string') return request?.headers.get(name) ?? null;
        guardInput(fromWs, name); // HTTP's parser refuses a NUL in a header; connection params are plain JSON
        return fromWs;
      };
      try {
        const headers = {
          bearer: bearerOf(header('authorization')),
          brand: header('service-brand') ?? undefined,
          client: client ?? koaState?.client,
        };
        const caller = await gate.authorize(headers, requestCost ?? 1);
        if (koaState) koaState.caller = caller;
        return {
          deps,
          gate,
          stream,
          caller,
          grant: { headers, caller },
          requestId,
          idempotencyKey: header('idempotency-key') ?? undefined,
          lastEventId: header('last-event-id') ?? undefined,
          markReplayed: () => {
            if (koaState) koaState.idempotentReplayed = true;
          },
        };
      } catch (e) {
        if (koaState && isDomainError(e)) koaState.errorCode = e.code;
        if (isDomainError(e)) throw toGraphQLError(e, requestId, 'always');
        throw e;
      }
    },
  }) as Yoga;
}

/** Counts executed operations by type (query, mutation, subscription), never by document; HTTP and graphql-ws share this pipeline. */
function countOperations(metrics: Metrics | undefined): Plugin {
  if (!metrics) return {};
  const count = ({ args }: { args: ExecutionArgs }) => {
    const type = getOperationAST(args.document, args.operationName)?.operation;
    if (type) metrics.graphqlOperations.labels(type).inc();
  };
  return { onExecute: count, onSubscribe: count };
}

/**
 * A span per executed query or mutation when tracing is on (src/tracing.ts), named `<type> <operation name>`; it
 * wraps the final execute function (graphql-jit's or graphql-js's), so the database spans of its resolvers are
 * its children, and it is itself a child of the HTTP request's span.
 */
function traceOperations(): Plugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      if (!tracing.enabled) return;
      const operation = getOperationAST(args.document, args.operationName);
      const type = operation?.operation ?? 'query';
      const name = operation?.name?.value;
      setExecuteFn((a: ExecutionArgs) =>
        tracing.span(name ? `${type} ${name}` : type, { 'graphql.operation.type': type, 'graphql.operation.name': name }, async (span) => {
          const result = await executeFn(a);
          const errors = (result as { errors?: readonly unknown[] }).errors?.length;
          if (errors) span.setAttributes({ 'graphql.error_count': errors });
          return result;
        }),
      );
    },
  };
}

/**
 * Error masking: thrown before execution (by the limits while parsing or
 * validating), a DomainError refuses the whole request; a DomainError behind
 * a field keeps its code; request errors are `invalid_request`; a database
 * that is down or cannot store data is `service_unavailable` and refuses the
 * whole request (503 with Retry-After, as REST answers; a storage fault is
 * reported to /readyz); anything else is logged and `internal_error`. Also
 * applied by src/graphql/ws.ts to the error that ends a subscription it holds
 * itself.
 */
export function maskGraphQLError(log: Logger, db: Pick<Database, 'storageFault'>) {
  return (error: unknown, message: string): Error => {
    if (isDomainError(error)) return toGraphQLError(error, 'unknown', 'always');
    const original = (error as { originalError?: unknown }).originalError ?? error;
    if (isDomainError(original)) return toGraphQLError(original, requestIdOf(error));
    if (isRequestError(error)) return asInvalidRequest(error);
    if (original && (original as { extensions?: { code?: string } }).extensions?.code) return error as Error;
    const unavailable = databaseUnavailable(original);
    if (unavailable) {
      if (unavailable.details.fault === 'storage') db.storageFault();
      log.warn({ err: original }, 'database unavailable');
      return toGraphQLError(unavailable, requestIdOf(error), 'always');
    }
    log.error({ err: original }, 'unhandled GraphQL error');
    return toGraphQLError(new DomainError('internal_error', message), requestIdOf(error));
  };
}

function requestIdOf(error: unknown): string {
  return ((error as { extensions?: { request_id?: string } }).extensions?.request_id as string) ?? 'unknown';
}

type Result = { errors?: readonly GraphQLError[] };

/**
 * An HTTP result's errors with the HTTP request id where they have none
 * (errors masked without access to the request): the same id as the
 * `Request-Id` header and REST envelopes. Errors are copied, never changed:
 * validation results are cached and shared between requests.
 */
export function stampRequestIds(id: string, result: Result | Result[]): Result | Result[] {
  const one = (r: Result): Result => (r.errors?.length ? { ...r, errors: r.errors.map((e) => withRequestId(e, id)) } : r);
  return Array.isArray(result) ? result.map(one) : one(result);
}

/**
 * Every error leaves with a catalogue code and the request id. Validation
 * errors (never masked: they are results, not exceptions) become
 * `invalid_request` as they are made, for HTTP and graphql-ws alike; HTTP
 * results get their request id stamped (`stampRequestIds`, which the direct
 * JSON path in direct.ts also applies).
 */
function catalogueCodesOnErrors() {
  return {
    onValidate:
      () =>
      ({ valid, result, setResult }: { valid: boolean; result: readonly GraphQLError[]; setResult: (r: GraphQLError[]) => void }) => {
        if (!valid) setResult(result.map(asInvalidRequest));
      },
    onResultProcess: ({
      result,
      setResult,
      serverContext,
    }: {
      result: unknown;
      setResult: (r: unknown) => void;
      serverContext: { requestId?: string };
    }) => {
      const id = serverContext.requestId;
      if (!id || !result || (typeof result === 'object' && Symbol.asyncIterator in result)) return;
      setResult(stampRequestIds(id, result as Result | Result[]));
    },
  };
}
