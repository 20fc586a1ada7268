import type { GraphQLResolveInfo } from 'graphql';
import type { z } from 'zod';
import type { ArgBuilder, InputFieldMap, InputShapeFromFields, ObjectRef } from '@pothos/core';
import { invoke, type Action, type Invocation } from '../domain/action/action.ts';
import { builder } from './builder.ts';
import { listConnection, type ConnectionArgs } from './connection.ts';
import type { GraphQLContext } from './context.ts';
import { graphqlIdempotencyKey } from './idempotency.ts';

/**
 * GraphQL binds an action to a field: `authScopes` from the action, an
 * `idempotencyKey` argument when it is idempotent, the field's arguments
 * turned into the action's params and input by the binding, and the typed
 * value returned. The field carries `extensions.action` (the parity test
 * finds the GraphQL side of each action by it).
 */
type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

export interface FieldBinding<P extends string, O extends z.ZodType, Args extends InputFieldMap, Parent, R> {
  /** The Pothos type of the result (an object ref, or a list of one). */
  type: unknown;
  description?: string;
  args?: (arg: ArgBuilder<Types>) => Args;
  input: (args: InputShapeFromFields<Args>, parent: Parent) => Invocation<P>;
  /** The part of the value the field returns (default: all of it). */
  result?: (value: z.output<O>) => R;
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
  return {
    type: b.type,
    description: b.description,
    authScopes: { scope: action.scope },
    extensions: { action: action.name },
    args: { ...b.args?.(arg), ...(action.idempotent ? { idempotencyKey: arg.string(IDEMPOTENCY_KEY) } : {}) },
    resolve: async (
      parent: Parent,
      args: InputShapeFromFields<Args> & { idempotencyKey?: string | null },
      ctx: GraphQLContext,
      info: GraphQLResolveInfo,
    ) => {
      const value = await run(action, ctx, info, b.input(args, parent), args.idempotencyKey);
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

type ListOutput = z.ZodType<{ object: 'list'; data: { id: string }[]; has_more: boolean }>;

/** A list action as a Relay connection (src/graphql/connection.ts): a root query field, or a field of `parent` whose ids feed the params. */
export function connectionAction<P extends string, I extends z.ZodType, O extends ListOutput, Args extends InputFieldMap, Parent = unknown>(
  name: string,
  action: Action<P, I, O>,
  b: FieldBinding<P, O, Args, Parent, never> & {
    parent?: ObjectRef<Types, Parent>;
    cursor?: (node: z.output<O>['data'][number]) => string;
    /** Input names the field's arguments spell differently (REST `subject_type`, GraphQL `subjectType`): errors name the argument. */
    argNames?: Record<string, string>;
  },
): void {
  const options = (arg: ArgBuilder<Types>) => ({
    type: b.type,
    description: b.description,
    authScopes: { scope: action.scope },
    extensions: { action: action.name },
    ...(b.args ? { args: b.args(arg) } : {}),
    resolve: (parent: Parent, args: InputShapeFromFields<Args> & ConnectionArgs, ctx: GraphQLContext, info: GraphQLResolveInfo) => {
      const req = b.input(args, parent);
      const list = (paging: object) => run(action, ctx, info, { ...req, input: { ...(req.input as object), ...paging } }, undefined);
      return listConnection(args, list, b.cursor, b.argNames);
    },
  });
  type ConnectionBuilder = { arg: ArgBuilder<Types>; connection: (o: AnyFieldOptions) => never };
  if (b.parent)
    builder.objectField(b.parent as never, name, (t) =>
      (t as unknown as ConnectionBuilder).connection(options((t as unknown as ConnectionBuilder).arg) as AnyFieldOptions),
    );
  else builder.queryField(name, (t) => t.connection(options(t.arg) as AnyFieldOptions));
}
