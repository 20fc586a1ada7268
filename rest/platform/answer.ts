import type { Context } from 'koa';
import { z } from 'zod';
import type { Deps } from '../../src/domain/context.ts';
import type { StoredResponse } from '../../src/domain/idempotency/idempotency.ts';
import type { SurfaceBCaller } from '../../src/domain/platform/request-auth.ts';
import { parseInput } from '../../src/domain/validation.ts';
import { callerWith, idempotencyKeyOf, platformBody, platformQuery } from './pipeline.ts';

const NoQuery = z.strictObject({});

/**
 * The REST half of every idempotent Surface B mutation: scope check, no query
 * parameters, the JSON body, then the domain's mutation; answers its stored
 * (or replayed) status and body.
 */
export async function answerMutation(
  deps: Deps,
  ctx: Context,
  scope: string,
  run: (caller: SurfaceBCaller, input: Record<string, unknown>, idempotencyKey: string | undefined) => Promise<StoredResponse & { replayed: boolean }>,
): Promise<void> {
  const caller = callerWith(ctx, scope);
  parseInput(NoQuery, platformQuery(ctx));
  const out = await run(caller, await platformBody(deps, ctx), idempotencyKeyOf(ctx));
  if (out.replayed) ctx.set('Idempotent-Replayed', 'true');
  ctx.status = out.status;
  ctx.body = out.body;
}

/** A read of one object (or one fixed list): scope check, no query parameters, the domain call's result as the body. */
export async function answerRetrieve(ctx: Context, scope: string, run: (caller: SurfaceBCaller) => Promise<unknown>): Promise<void> {
  const caller = callerWith(ctx, scope);
  parseInput(NoQuery, platformQuery(ctx));
  ctx.body = await run(caller);
}
