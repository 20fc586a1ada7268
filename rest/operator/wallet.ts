import type { Context } from 'koa';
import type { Deps } from '../../src/domain/context.ts';
import {
  ProviderCleanupInput,
  ProviderReviewInput,
  recordProviderCleanup,
  recordProviderReview,
} from '../../src/domain/distribution/provider-callback.ts';
import { authenticateOperator } from '../../src/domain/operator/operator-token.ts';
import { TopUpInput, retrieveWallet, topUpWallet } from '../../src/domain/wallet/wallet.ts';
import { bearer, readJsonBody } from '../http/body.ts';
import type { RouteDef } from '../http/route.ts';

/**
 * Operator money and sandbox-provider routes: top up a brand wallet (wakes
 * launches waiting on funding) and play the sandbox provider's callbacks
 * (a review decision, the end of an asynchronous teardown).
 */
const SANDBOX_CALLBACKS = [
  [
    'review',
    'decideSandboxReview',
    'Sandbox provider: approve or reject a deployment in review',
    ProviderReviewInput,
    recordProviderReview,
  ],
  [
    'cleanup',
    'settleSandboxCleanup',
    'Sandbox provider: report how an asynchronous teardown ended',
    ProviderCleanupInput,
    recordProviderCleanup,
  ],
] as const;

export function operatorWalletRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Operator', auth: 'operator' as const, errors: [400, 401, 404, 409] };
  const operatorBody = async (ctx: Context) => {
    await authenticateOperator(deps, bearer(ctx) || undefined, ctx.state.client);
    return readJsonBody(ctx, deps.config.bodyLimitBytes);
  };
  return [
    {
      ...common,
      method: 'GET',
      path: '/operator/brands/:brand/wallet',
      operationId: 'retrieveBrandWallet',
      summary: "A brand's wallet balance (integer minor units); {brand} is a brand_ id or <organization slug>.<brand slug>",
      success: { status: 200, description: 'The wallet' },
      handler: async (ctx) => {
        await authenticateOperator(deps, bearer(ctx) || undefined, ctx.state.client);
        ctx.body = await retrieveWallet(deps, ctx.params.brand!);
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/operator/brands/:brand/wallet/top_up',
      operationId: 'topUpBrandWallet',
      summary:
        'Add money to a brand wallet; launches waiting on funding retry at once ({brand}: a brand_ id or <organization slug>.<brand slug>)',
      body: TopUpInput,
      idempotent: true,
      success: { status: 200, description: 'The wallet after the top-up (a replayed Idempotency-Key answers the stored result)' },
      handler: async (ctx) => {
        const body = await operatorBody(ctx);
        ctx.body = await topUpWallet(deps, ctx.params.brand!, body, ctx.get('idempotency-key') || undefined);
      },
    },
    ...SANDBOX_CALLBACKS.map(
      ([name, operationId, summary, body, record]): RouteDef => ({
        ...common,
        method: 'POST',
        path: `/operator/sandbox/deployments/:id/${name}`,
        operationId,
        summary,
        body,
        success: { status: 200, description: 'The deployment' },
        handler: async (ctx) => {
          const input = await operatorBody(ctx);
          ctx.body = await record(deps, ctx.params.id!, input);
        },
      }),
    ),
  ];
}
