import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import {
  getNamedType,
  getOperationAST,
  getVariableValues,
  isInterfaceType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type FieldNode,
  type SelectionSetNode,
  type GraphQLError,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLLimits } from '../config.ts';
import { DomainError } from '../domain/errors.ts';
import { DEFAULT_LIST_LIMIT, requestCost } from '../domain/platform/rate-limit.ts';

/**
 * What one GraphQL document may ask for, refused before anything executes
 * with 400 `query_too_complex`: lexical tokens (while parsing), depth,
 * aliases and directives (graphql-armor's rules), and the cost of the list
 * items it requests. The cost is the domain's `requestCost`, the same rule
 * REST charges, so the context factory charges the caller's rate-limit
 * bucket with it (`requestCost` in the context).
 */
export interface CostContext {
  /** Rate-limit tokens the operation costs, set once its document is valid. */
  requestCost?: number;
}

/** Thrown from parse or validate, so it refuses the whole request (see maskError in yoga.ts). */
const tooComplex = (message: string) => new DomainError('query_too_complex', message);

export function graphqlLimits(limits: GraphQLLimits): Plugin[] {
  // armor builds its own error ("Syntax Error: ..."): refuse with the catalogue's instead.
  const refuse = {
    propagateOnRejection: false,
    onReject: [
      (_: unknown, e: GraphQLError) => {
        throw tooComplex(e.message.replace(/^Syntax Error: /, ''));
      },
    ],
  };
  return [
    maxTokensPlugin({ n: limits.maxTokens, ...refuse }),
    maxDepthPlugin({ n: limits.maxDepth, ...refuse }),
    maxAliasesPlugin({ n: limits.maxAliases, ...refuse }),
    maxDirectivesPlugin({ n: limits.maxDirectives, ...refuse }),
    listCost(limits.maxCost),
  ] as Plugin[];
}

/**
 * Prices the operation once its document is valid (so fragments are acyclic
 * and every field exists), with its variables coerced: when they do not
 * coerce, sizes count as the default page and execution refuses them. The
 * check runs on every request, even when validation itself was cached,
 * because the same document costs differently with other variables.
 */
function listCost(maxCost: number): Plugin<CostContext> {
  return {
    onValidate({ params, context }) {
      const { schema, documentAST } = params;
      return ({ valid, extendContext }) => {
        if (!valid) return;
        const request = (context as { params?: { operationName?: string | null; variables?: unknown } }).params;
        const items = listItemsRequested(schema, documentAST, request?.operationName, request?.variables);
        const cost = requestCost(items);
        if (cost > maxCost) {
          throw tooComplex(
            `This operation asks for up to ${items} list items (cost ${cost}); the limit is ${maxCost}: ask for smaller pages`,
          );
        }
        extendContext({ requestCost: cost } satisfies CostContext);
      };
    },
  };
}

/** A field's page size arguments (Relay's `first`/`last`, REST's `limit`, units' `perPage`). */
const SIZE_ARGUMENTS = new Set(['first', 'last', 'limit', 'perPage']);

/**
 * The list items an operation asks for: each paged field counts its page
 * size times the page sizes of the paged fields around it, so nesting
 * multiplies and aliases add. Lists without a size argument are bounded by
 * the server and count nothing.
 */
export function listItemsRequested(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: unknown,
): number {
  const operation = getOperationAST(document, operationName);
  if (!operation) return 0;
  const root = schema.getRootType(operation.operation);
  if (!root) return 0;
  const inputs = rawVariables && typeof rawVariables === 'object' ? (rawVariables as Record<string, unknown>) : {};
  const variables = getVariableValues(schema, operation.variableDefinitions ?? [], inputs).coerced ?? {};
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  // Items per fragment at multiplier 1: a fragment spread many times is priced once (no exponential walk).
  const perFragment = new Map<string, number>();

  const sizeOf = (node: FieldNode, field: GraphQLField<unknown, unknown>): number => {
    let size: number | undefined;
    for (const arg of node.arguments ?? []) {
      if (!SIZE_ARGUMENTS.has(arg.name.value)) continue;
      const value =
        arg.value.kind === Kind.VARIABLE
          ? variables[arg.value.name.value]
          : arg.value.kind === Kind.INT
            ? Number(arg.value.value)
            : undefined;
      if (typeof value === 'number' && Number.isInteger(value) && value >= 0) size = Math.max(size ?? 0, value);
    }
    const declared = field.args.find((a) => SIZE_ARGUMENTS.has(a.name) && typeof a.defaultValue === 'number')?.defaultValue;
    return size ?? (declared as number | undefined) ?? DEFAULT_LIST_LIMIT;
  };

  const walk = (selections: SelectionSetNode, type: GraphQLCompositeType): number => {
    let items = 0;
    for (const s of selections.selections) {
      if (s.kind === Kind.FIELD) {
        const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[s.name.value] : undefined;
        if (!field) continue; // __typename and introspection
        const paged = field.args.some((a) => SIZE_ARGUMENTS.has(a.name));
        const size = paged ? sizeOf(s, field) : 1;
        const inner = s.selectionSet ? walk(s.selectionSet, getNamedType(field.type) as GraphQLCompositeType) : 0;
        items += (paged ? size : 0) + size * inner;
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        const on = s.typeCondition ? (schema.getType(s.typeCondition.name.value) as GraphQLCompositeType) : type;
        items += walk(s.selectionSet, on);
      } else {
        const name = s.name.value;
        if (!perFragment.has(name)) {
          const fragment = fragments.get(name)!;
          perFragment.set(name, walk(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) as GraphQLCompositeType));
        }
        items += perFragment.get(name)!;
      }
    }
    return items;
  };
  return walk(operation.selectionSet, root);
}
