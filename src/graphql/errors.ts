import { httpStatus as statusOf } from '../http/error-status.ts';
import { GraphQLError, Kind } from 'graphql';
import type { DomainError } from '../domain/errors.ts';
import { refusalHeaders } from '../http/rate-limit-headers.ts';

/**
 * How an error sets the HTTP status: `none` for field errors (the response
 * keeps its partial data and 200); `always` for errors that refuse the whole
 * request (authentication, rate limit, cost limits); `spec` for GraphQL
 * request errors, which GraphQL-over-HTTP answers 400 under
 * `application/graphql-response+json` and 200 under legacy `application/json`.
 */
export type HttpStatusMode = 'none' | 'always' | 'spec';

/** The GraphQL serializer of the error catalogue: same `code` as REST, in `extensions`. */
export function toGraphQLError(e: DomainError, requestId: string, httpStatus: HttpStatusMode = 'none'): GraphQLError {
  const headers = refusalHeaders(e);
  return new GraphQLError(e.message, {
    extensions: {
      code: e.code,
      param: e.param,
      request_id: requestId,
      ...(typeof e.details.required_scope === 'string' ? { required_scope: e.details.required_scope } : {}),
      ...(typeof e.details.last_seq === 'string' ? { last_seq: e.details.last_seq } : {}),
      ...(httpStatus === 'none'
        ? {}
        : {
            http: {
              status: statusOf(e),
              ...(httpStatus === 'spec' ? { spec: true } : {}),
              ...(Object.keys(headers).length ? { headers } : {}),
            },
          }),
    },
  });
}

/**
 * The error with `request_id` set where it has none (or 'unknown'): errors are
 * copied, never changed, since validation results are cached and shared.
 */
export function withRequestId(e: GraphQLError, requestId: string): GraphQLError {
  const current = e.extensions?.request_id;
  if (current && current !== 'unknown') return e;
  return new GraphQLError(e.message, {
    nodes: e.nodes,
    source: e.source,
    positions: e.positions,
    path: e.path,
    extensions: { ...e.extensions, request_id: requestId },
  });
}

/** Codes Yoga and its executor give errors in the client's request (bad JSON, no query, parse, validation, variables, operation). */
const YOGA_REQUEST_CODES = new Set([
  'BAD_REQUEST',
  'BAD_USER_INPUT',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'OPERATION_RESOLUTION_FAILURE',
]);

/**
 * An error in the client's request, not in the server: one Yoga coded as
 * such, or one graphql-js raised itself (no code, no field path, nothing but
 * GraphQLErrors down its cause chain), e.g. a variable that does not coerce.
 */
export function isRequestError(error: unknown): error is GraphQLError {
  if (!(error instanceof GraphQLError)) return false;
  const code = error.extensions?.code;
  if (typeof code === 'string') return YOGA_REQUEST_CODES.has(code);
  if (error.path) return false;
  for (let e: unknown = error; e; e = (e as GraphQLError).originalError) if (!(e instanceof GraphQLError)) return false;
  return true;
}

/**
 * A request error as the catalogue's `invalid_request`, naming the variable
 * it is about. The HTTP status stays GraphQL-over-HTTP's: Yoga's `http`
 * extension when it set one, else 400 (200 under legacy application/json).
 */
export function asInvalidRequest(e: GraphQLError): GraphQLError {
  const node = e.nodes?.[0];
  const extensions = {
    http: { status: 400, spec: true },
    ...e.extensions,
    code: 'invalid_request',
    param: node?.kind === Kind.VARIABLE_DEFINITION ? node.variable.name.value : null,
    request_id: e.extensions?.request_id ?? 'unknown',
  };
  return new GraphQLError(e.message, { nodes: e.nodes, source: e.source, positions: e.positions, path: e.path, extensions });
}
