import type { GraphQLResolveInfo } from 'graphql';
import type { z } from 'zod';
import type { ArgBuilder, InputFieldMap, InputShapeFromFields, ObjectRef } from '@pothos/core';
import { invoke, type Action, type Invocation } from '../domain/action/action.ts';
import { builder } from './builder.ts';
import { listConnection, type ConnectionArgs } from './connection.ts';
import { argsOf, type ArgOptions } from './derive.ts';
import type { GraphQLContext } from './context.ts';
import { graphqlIdempotencyKey } from './idempotency.ts';

/**
 * GraphQL binds an action to a field: `authScopes` from the action, an
 * `idempotencyKey` argument when it is idempotent, the field's arguments
 * derived from the action's path ids and input schema (src/graphql/derive.ts)
 * and turned back into its params and input, and the typed value returned.
 * The field carries `extensions.action` (the parity test finds the GraphQL
 * side of each action by it).
 */
type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

export interface FieldBinding<P extends string, O extends z.ZodType, Args extends InputFieldMap, Parent, R> extends ArgOptions {
  /** The Pothos type of the result (an object ref, or a list of one). */
  type: unknown;
  description?: string;
  /** Arguments written by hand: with `input`, the field's only ones; without, they replace derived ones of the same name. */
  args?: (arg: ArgBuilder<Types>) => Args;
  /** Hand-written params and input, for a field whose arguments are not the action's (default: derived). */
  input?: (args: InputShapeFromFields<Args>, parent: Parent) => Invocation<P>;
  /** The part of the value the field returns (default: all of it). */
  result?: (value: z.output<O>) => R;
}

/** The field's arguments and how they become an invocation: the binding's own, or derived from the action. */
function bindArgs<P extends string, Args extends InputFieldMap, Parent>(
  arg: ArgBuilder<Types>,
  action: Action<P>,
  b: Pick<FieldBinding<P, z.ZodType, Args, Parent, unknown>, 'args' | 'input' | keyof ArgOptions>,
  fromParent?: (parent: Parent) => Record<string, string>,
) {
  if (b.input) return { args: b.args?.(arg) ?? {}, invocation: b.input as (args: never, parent: Parent) => Invocation<P>, argNames: {} };
  const derived = argsOf(arg, fromParent ? [] : action.params, action.input, b);
  return {
    args: { ...derived.args, ...b.args?.(arg) },
    invocation: (args: Record<string, unknown>, parent: Parent): Invocation<P> => {
      const req = derived.invocation(args);
      return { params: (fromParent ? fromParent(parent) : req.params) as Record<P, string>, input: req.input };
    },
    argNames: derived.argNames,
  };
}

const IDEMPOTENCY_KEY = { description: 'Overrides the Idempotency-Key header' };

async function run<P extends string, I extends z.ZodType, O extends z.ZodType>(
  action: Action<P, I, O>,
  ctx: GraphQLContext,
  info: GraphQLResolveInfo,
  req: Invocation<P>,
  key: string | null | undefined,
): Promise<z.output<O>> {
  const idempotencyKey = action.idempotent ? graphqlIdempotencyKey(ctx, info, key) : undefined;
  const out = await invoke({ deps: ctx.deps, caller: ctx.caller, idempotencyKey }, action, req);
  if (out.replayed) ctx.markReplayed();
  return out.value;
}

function fieldOptions<P extends string, I extends z.ZodType, O extends z.ZodType, Args extends InputFieldMap, Parent, R>(
  arg: ArgBuilder<Types>,
  action: Action<P, I, O>,
  b: FieldBinding<P, O, Args, Parent, R>,
) {
  const bound = bindArgs(arg, action, b);
  return {
    type: b.type,
    description: b.description,
    authScopes: { scope: action.scope },
    extensions: { action: action.name },
    args: { ...bound.args, ...(action.idempotent ? { idempotencyKey: arg.string(IDEMPOTENCY_KEY) } : {}) },
    resolve: async (
      parent: Parent,
      { idempotencyKey, ...args }: Record<string, unknown> & { idempotencyKey?: string | null },
      ctx: GraphQLContext,
      info: GraphQLResolveInfo,
    ) => {
      const value = await run(action, ctx, info, bound.invocation(args as never, parent), idempotencyKey);
      return b.result ? b.result(value) : value;
    },
  };
}

// Pothos infers a field's types from literal options; these generic options are checked above, against the action.
type AnyFieldOptions = never;

export function queryAction<P extends string, I extends z.ZodType, O extends z.ZodType, Args extends InputFieldMap, R = z.output<O>>(
  name: string,
  action: Action<P, I, O>,
  b: FieldBinding<P, O, Args, unknown, R>,
): void {
  builder.queryField(name, (t) => t.field(fieldOptions(t.arg, action, b) as AnyFieldOptions));
}

export function mutationAction<P extends string, I extends z.ZodType, O extends z.ZodType, Args extends InputFieldMap, R = z.output<O>>(
  name: string,
  action: Action<P, I, O>,
  b: FieldBinding<P, O, Args, unknown, R>,
): void {
  builder.mutationField(name, (t) => t.field(fieldOptions(t.arg, action, b) as AnyFieldOptions));
}

/** A list's paging input (src/domain/action/list.ts), which a connection takes as first/after. */
const PAGING = ['limit', 'starting_after'];

type ListOutput = z.ZodType<{ object: 'list'; data: { id: string }[]; has_more: boolean }>;

/** A list action as a Relay connection (src/graphql/connection.ts): a root query field, or a field of `parent` whose ids feed the params. */
export function connectionAction<P extends string, I extends z.ZodType, O extends ListOutput, Args extends InputFieldMap, Parent = unknown>(
  name: string,
  action: Action<P, I, O>,
  b: FieldBinding<P, O, Args, Parent, never> & {
    /** The type the connection is a field of; its object gives the path ids. */
    parent?: ObjectRef<Types, Parent>;
    paramsOf?: (parent: Parent) => Record<P, string>;
    cursor?: (node: z.output<O>['data'][number]) => string;
  },
): void {
  const options = (arg: ArgBuilder<Types>) => {
    const bound = bindArgs(arg, action, { ...b, skip: [...PAGING, ...(b.skip ?? [])] }, b.paramsOf);
    return {
      type: b.type,
      description: b.description,
      authScopes: { scope: action.scope },
      extensions: { action: action.name },
      args: bound.args,
      resolve: (parent: Parent, args: Record<string, unknown> & ConnectionArgs, ctx: GraphQLContext, info: GraphQLResolveInfo) => {
        const { first, after, last, before, ...rest } = args;
        const req = bound.invocation(rest as never, parent);
        const list = (paging: object) => run(action, ctx, info, { ...req, input: { ...(req.input as object), ...paging } }, undefined);
        return listConnection({ first, after, last, before }, list, b.cursor, bound.argNames);
      },
    };
  };
  type ConnectionBuilder = { arg: ArgBuilder<Types>; connection: (o: AnyFieldOptions) => never };
  if (b.parent)
    builder.objectField(b.parent as never, name, (t) =>
      (t as unknown as ConnectionBuilder).connection(options((t as unknown as ConnectionBuilder).arg) as AnyFieldOptions),
    );
  else builder.queryField(name, (t) => t.connection(options(t.arg) as AnyFieldOptions));
}
