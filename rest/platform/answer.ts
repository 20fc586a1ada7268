import type { Context } from 'koa';
import { z } from 'zod';
import { invoke, type Action, type Outcome } from '../../src/domain/action/action.ts';
import type { Deps } from '../../src/domain/context.ts';
import type { SurfaceBCaller } from '../../src/domain/platform/request-auth.ts';
import { parseInput } from '../../src/domain/validation.ts';
import { writeJson } from '../../src/http/json-body.ts';
import type { RouteDef } from '../http/route.ts';
import { confirmsAdmission, idempotencyKeyOf, platformBody, platformQuery } from './pipeline.ts';

type Handler = (ctx: Context) => Promise<void>;

const NoQuery = z.strictObject({});

/** A read, or a batched action, confirms a provisional admission after it reads or before it commits (invoke); a transaction does not. */
const confirming = (action: Action): ((h: Handler) => Handler) =>
  action.effect.kind === 'transaction' ? (h) => h : (h) => confirmsAdmission(action.effect.kind === 'read' ? 'read' : 'write', h);

/** What REST says for each outcome. */
const STATUS: Record<Outcome, number> = { ok: 200, created: 201, accepted: 202 };

/** An action's REST binding: the spec's table row, minus what the action already says (scope, schemas, idempotency, status). */
export interface ActionRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** Koa path; its `:params` are the action's params, in order. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** The success response's description. */
  description: string;
  /** Wraps the value: `{ [envelope]: value }` (e.g. `webhook_endpoint`). */
  envelope?: string;
  errors: number[];
  /** Documents the query differently from the action's input (e.g. a closed vocabulary the domain checks itself). */
  documentedQuery?: z.ZodType;
}

/**
 * Binds an action to a method and path. A GET takes its input from the query
 * string; a POST or DELETE from the JSON body, and refuses query parameters.
 * `mount()` checks the action's scope before the handler reads anything.
 */
export function actionRoute<P extends string, I extends z.ZodType, O extends z.ZodType>(
  deps: Deps,
  action: Action<P, I, O>,
  r: ActionRoute,
): RouteDef {
  const pathParams = [...r.path.matchAll(/:([a-z_]+)/gi)].map((m) => m[1]);
  if (pathParams.join() !== action.params.join())
    throw new Error(`${r.method} ${r.path} does not name the params of ${action.name} (${action.params.join(', ')})`);
  const inBody = r.method !== 'GET';
  const hasInput = Object.keys((action.input as unknown as { shape?: object }).shape ?? { any: 1 }).length > 0;
  const schema = r.envelope ? z.object({ [r.envelope]: action.output }) : action.output;
  return {
    method: r.method,
    path: r.path,
    operationId: r.operationId,
    summary: r.summary,
    tag: r.tag,
    auth: 'platform',
    scope: action.scope,
    action,
    ...(inBody ? (hasInput ? { body: action.input } : {}) : { query: r.documentedQuery ?? action.input }),
    idempotent: action.idempotent,
    success: { status: STATUS[action.outcome], description: r.description, schema },
    otherResponses: (action.alsoAnswers ?? []).map((o) => ({ status: STATUS[o], description: r.description, schema })),
    errors: r.errors,
    handler: confirming(action)(async (ctx) => {
      let input: Record<string, unknown>;
      if (inBody) {
        if (ctx.querystring) parseInput(NoQuery, platformQuery(ctx));
        input = await platformBody(deps, ctx);
      } else input = platformQuery(ctx);
      const params = Object.fromEntries(action.params.map((p) => [p, ctx.params[p]!])) as Record<P, string>;
      const context = {
        deps,
        caller: ctx.state.caller as SurfaceBCaller,
        idempotencyKey: action.idempotent ? idempotencyKeyOf(ctx) : undefined,
      };
      const out = await invoke(context, action, { params, input });
      if (out.replayed) ctx.set('Idempotent-Replayed', 'true');
      ctx.status = STATUS[out.outcome];
      writeJson(ctx, JSON.stringify(r.envelope ? { [r.envelope]: out.value } : out.value));
    }),
  };
}
