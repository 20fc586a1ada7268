import type { PublicUnit } from '../../domain/unit/unit.ts';
import { executeScope } from '../../domain/scope/executor.ts';
import { builder } from '../builder.ts';
import { graphqlIdempotencyKey } from '../idempotency.ts';
import type { GraphQLContext } from '../context.ts';
import { UnitStatus } from './enums.ts';
import { Node } from './node.ts';

/**
 * Surface A's units, through the same scope executor as `/scopes_exec` and
 * `/api/units/*`: same scope checks, audit, idempotency and create limit.
 */
const Unit = builder.objectRef<PublicUnit>('Unit').implement({
  description: 'A Surface A unit (unit_): a draft until published',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.exposeString('type'),
    caption: t.exposeString('caption'),
    productionId: t.exposeString('production_id', { nullable: true }),
    status: t.expose('status', { type: UnitStatus }),
    publishedAt: t.expose('published_at', { type: 'DateTime', nullable: true }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.expose('created_at', { type: 'DateTime' }),
    updatedAt: t.expose('updated_at', { type: 'DateTime' }),
  }),
});

const UnitPage = builder.objectRef<{ units: PublicUnit[]; page: number; per_page: number; has_more: boolean }>('UnitPage').implement({
  description: 'One page of units (Surface A pages by number)',
  fields: (t) => ({
    units: t.field({ type: [Unit], resolve: (p) => p.units }),
    page: t.exposeInt('page'),
    perPage: t.exposeInt('per_page'),
    hasMore: t.exposeBoolean('has_more'),
  }),
});

const CreateUnitPayload = builder.objectRef<{ unit: PublicUnit; duplicate: boolean }>('CreateUnitPayload').implement({
  description: 'What createUnit answers; duplicate is true when an idempotent replay found the unit',
  fields: (t) => ({ unit: t.field({ type: Unit, resolve: (p) => p.unit }), duplicate: t.exposeBoolean('duplicate') }),
});

const exec = async (ctx: GraphQLContext, scope: string, data: Record<string, unknown>, idempotencyKey?: string) => {
  const out = await executeScope(ctx.deps, ctx.caller, { scope, data, idempotencyKey, requestId: ctx.requestId });
  if (out.duplicate) ctx.markReplayed();
  return out.result;
};

const drop = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

builder.queryField('units', (t) =>
  t.field({
    type: UnitPage,
    description: 'Units, newest first (scope units:read)',
    args: { page: t.arg.int(), perPage: t.arg.int() },
    resolve: async (_r, a, ctx) => (await exec(ctx, 'units:read', drop({ page: a.page, per_page: a.perPage }))) as never,
  }),
);

builder.mutationField('createUnit', (t) =>
  t.field({
    type: CreateUnitPayload,
    description: 'Create a draft unit (scope units:create; idempotent; create-rate-limited)',
    args: {
      type: t.arg.string({ required: true }),
      caption: t.arg.string({ required: true }),
      productionId: t.arg.string(),
      idempotencyKey: t.arg.string({ description: 'Overrides the Idempotency-Key header' }),
    },
    resolve: async (_r, a, ctx, info) =>
      (await exec(
        ctx,
        'units:create',
        drop({ type: a.type, caption: a.caption, production_id: a.productionId }),
        graphqlIdempotencyKey(ctx, info, a.idempotencyKey),
      )) as never,
  }),
);

builder.mutationField('publishUnit', (t) =>
  t.field({
    type: Unit,
    description: 'Publish a draft unit (scope units:publish)',
    args: { unitId: t.arg.id({ required: true }) },
    resolve: async (_r, a, ctx) => ((await exec(ctx, 'units:publish', { unit_id: String(a.unitId) })) as { unit: PublicUnit }).unit,
  }),
);

builder.mutationField('deleteUnit', (t) =>
  t.field({
    type: 'Boolean',
    description: 'Delete a draft unit (scope units:delete)',
    args: { unitId: t.arg.id({ required: true }) },
    resolve: async (_r, a, ctx) => {
      await exec(ctx, 'units:delete', { unit_id: String(a.unitId) });
      return true;
    },
  }),
);
