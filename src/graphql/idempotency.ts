import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import { DomainError } from '../domain/errors.ts';
import { validateIdempotencyKey } from '../domain/idempotency/idempotency.ts';
import type { GraphQLContext } from './context.ts';

/** Top-level mutation fields of the operation (through fragments), to apply the header only to a single-mutation operation. */
function rootFieldCount(set: SelectionSetNode, info: GraphQLResolveInfo): number {
  return set.selections.reduce((n, s) => {
    if (s.kind === Kind.FIELD) return n + 1;
    const inner = s.kind === Kind.INLINE_FRAGMENT ? s.selectionSet : info.fragments[s.name.value]?.selectionSet;
    return n + (inner ? rootFieldCount(inner, info) : 0);
  }, 0);
}

/**
 * The mutation's idempotency key: its `idempotencyKey` argument, else the
 * `Idempotency-Key` header, which only a single-mutation operation may use
 * (one key cannot stand for several effects).
 */
export function graphqlIdempotencyKey(ctx: GraphQLContext, info: GraphQLResolveInfo, arg: string | null | undefined): string | undefined {
  if (arg != null) return validateIdempotencyKey(arg, 'idempotencyKey');
  if (ctx.idempotencyKey === undefined) return undefined;
  if (rootFieldCount(info.operation.selectionSet, info) > 1) {
    throw new DomainError(
      'invalid_request',
      'The Idempotency-Key header applies to single-mutation operations; give each mutation its own idempotencyKey argument',
      'Idempotency-Key',
    );
  }
  return ctx.idempotencyKey;
}
