import type { z } from 'zod';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { missingScope } from '../errors.ts';
import { runIdempotentValue } from '../idempotency/idempotency.ts';
import { idempotency } from '../platform/mutation.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { parseInput } from '../validation.ts';

/**
 * The seam between the domain and its fronts. A capability declares each
 * operation once, as an action: its name, scope, the path ids it addresses,
 * its input and output schemas (the output is the presenter's schema; the
 * public type is inferred from it), whether it is idempotent, its outcome and
 * which fronts carry it. `invoke` is the one way to run it; REST binds it to a
 * method and path (rest/http/action-route.ts), GraphQL to a field
 * (src/graphql/action.ts). The domain never sees an HTTP status or envelope.
 */
export type Outcome = 'created' | 'ok' | 'accepted';
export type Front = 'rest' | 'graphql';
export type Reader = Tx | Deps['db']['prisma'];

/** What an action's body receives: parsed input, the path ids, and the database (the transaction of an idempotent action). */
export interface Call<P extends string, In, Db extends Reader = Reader> {
  deps: Deps;
  caller: SurfaceBCaller;
  params: Readonly<Record<P, string>>;
  input: In;
  db: Db;
}

export interface Action<P extends string = string, I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  /** Stable name, e.g. `webhook_endpoints.create`; also the idempotency fingerprint's first part. */
  readonly name: string;
  readonly scope: string;
  /** Path ids, in order (REST path parameters, GraphQL id arguments); together the fingerprint's target. */
  readonly params: readonly P[];
  /** The input besides the path ids: the REST body (POST, DELETE) or query (GET). */
  readonly input: I;
  readonly output: O;
  /** Runs in one transaction with its `Idempotency-Key` record; a key replays the stored value. */
  readonly idempotent: boolean;
  readonly outcome: Outcome;
  readonly fronts: readonly Front[];
  readonly run: (call: Call<P, z.output<I>>) => Promise<z.output<O>>;
}

interface Declaration<P extends string, I extends z.ZodType, O extends z.ZodType> {
  name: string;
  scope: string;
  params?: readonly P[];
  input: I;
  output: O;
  fronts: readonly Front[];
}

/** A change: idempotent, in a transaction. */
export function mutation<P extends string, I extends z.ZodType, O extends z.ZodType>(
  d: Declaration<P, I, O> & { outcome: Outcome; run: (call: Call<P, z.output<I>, Tx>) => Promise<z.output<O>> },
): Action<P, I, O> {
  return { ...d, params: d.params ?? [], idempotent: true, run: d.run as Action<P, I, O>['run'] };
}

/** A read: no key, no transaction. */
export function read<P extends string, I extends z.ZodType, O extends z.ZodType>(
  d: Declaration<P, I, O> & { run: (call: Call<P, z.output<I>>) => Promise<z.output<O>> },
): Action<P, I, O> {
  return { ...d, params: d.params ?? [], idempotent: false, outcome: 'ok' };
}

export interface ActionContext {
  deps: Deps;
  caller: SurfaceBCaller;
  /** The `Idempotency-Key`: validated here (naming the header) unless the front did, in its own words. */
  idempotencyKey?: string;
}

export interface Invocation<P extends string> {
  params?: Readonly<Record<P, string>>;
  /** The raw input; parsed by the action's schema (the first problem is `invalid_request` naming the parameter). */
  input?: unknown;
}

/**
 * Checks the scope, then runs the action. An idempotent action parses its
 * input inside the keyed transaction, after the replay lookup: a key answers
 * as it did the first time (or refuses a different request) before today's
 * validation is consulted, as the REST and GraphQL mutations always have.
 */
export async function invoke<P extends string, I extends z.ZodType, O extends z.ZodType>(
  ctx: ActionContext,
  action: Action<P, I, O>,
  req: Invocation<P> = {},
): Promise<{ value: z.output<O>; replayed: boolean }> {
  const { deps, caller } = ctx;
  if (!caller.scopes.has(action.scope)) throw missingScope(action.scope);
  const params = req.params ?? ({} as Record<P, string>);
  const run = (db: Reader) => action.run({ deps, caller, params, input: parseInput(action.input, req.input), db });
  if (!action.idempotent) return { value: await run(deps.db.prisma), replayed: false };
  const target = action.params.length ? action.params.map((p) => params[p]).join('/') : undefined;
  const key = idempotency(caller, { name: action.name, target, input: req.input ?? {}, idempotencyKey: ctx.idempotencyKey });
  return runIdempotentValue(deps, key, run);
}
