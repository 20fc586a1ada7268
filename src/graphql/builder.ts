import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import RelayPlugin from '@pothos/plugin-relay';
import type PrismaTypes from '../db/generated/pothos-types.ts';
import { getDatamodel } from '../db/generated/pothos-types.ts';
import { missingScope } from '../domain/errors.ts';
import type { GraphQLContext } from './context.ts';

/**
 * Builder configuration only. The Prisma client comes from the context: one
 * schema serves several app instances (tests run many, each with its own
 * database), so there is no module-level client to import.
 */
/** The scope named by a scope-auth failure (possibly nested in any/all groups). */
function firstMissingScope(failure: unknown): string | undefined {
  const f = failure as { kind?: string; parameter?: unknown; failures?: unknown[] };
  if (f?.kind === 'AuthScope') return String(f.parameter);
  for (const inner of f?.failures ?? []) {
    const found = firstMissingScope(inner);
    if (found) return found;
  }
  return undefined;
}

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  AuthScopes: { scope: string };
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [ScopeAuthPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (ctx) => ({ scope: (s: string) => ctx.caller.scopes.has(s) }),
    unauthorizedError: (_parent, _ctx, _info, result) => missingScope(firstMissingScope(result.failure) ?? 'unknown'),
  },
  prisma: {
    client: (ctx) => ctx.deps.db.prisma,
    dmmf: getDatamodel(),
    filterConnectionTotalCount: true,
    onUnusedQuery: process.env.NODE_ENV === 'test' ? 'error' : null,
  },
  relay: { clientMutationId: 'omit', cursorType: 'String' },
});

builder.scalarType('DateTime', {
  description: 'An RFC 3339 timestamp',
  serialize: (v) => (v instanceof Date ? v.toISOString() : v),
  parseValue: (v) => {
    const d = new Date(String(v));
    if (Number.isNaN(d.getTime())) throw new TypeError('DateTime must be an RFC 3339 string');
    return d;
  },
});
builder.scalarType('JSON', { description: 'Any JSON value', serialize: (v) => v, parseValue: (v) => v });

builder.queryType({});
builder.mutationType({});
