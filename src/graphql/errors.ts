import { GraphQLError } from 'graphql';
import type { DomainError } from '../domain/errors.ts';

/** The GraphQL serializer of the error catalogue: same `code` as REST, in `extensions`. */
export function toGraphQLError(e: DomainError, requestId: string, withHttpStatus = false): GraphQLError {
  return new GraphQLError(e.message, {
    extensions: {
      code: e.code,
      param: e.param,
      request_id: requestId,
      ...(typeof e.details.required_scope === 'string' ? { required_scope: e.details.required_scope } : {}),
      ...(withHttpStatus ? { http: { status: e.status } } : {}),
    },
  });
}
