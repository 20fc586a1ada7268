import { builder } from '../builder.ts';
import { Node } from './node.ts';
import { Brand } from './brand.ts';
import { organizationBrands, retrieveBrand } from '../../domain/brand/brand.ts';
import { organizationById } from '../../domain/organization/store.ts';

builder.prismaObject('Organization', {
  description: 'The organization that owns the token',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    slug: t.exposeString('slug'),
    name: t.exposeString('name'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

/** The authenticated caller: its organization, brands, selected brand and effective scopes. */
const Viewer = builder.objectRef<{ organizationId: string; brandId: string; tokenId: string; scopes: string[] }>('Viewer');

Viewer.implement({
  description: 'The authenticated caller',
  fields: (t) => ({
    tokenId: t.exposeID('tokenId'),
    scopes: t.exposeStringList('scopes'),
    organization: t.prismaField({
      type: 'Organization',
      resolve: async (query, v, _args, ctx) => {
        const organization = await organizationById(ctx.deps.db.prisma, v.organizationId, query);
        if (!organization) throw new Error(`The caller's organization ${v.organizationId} does not exist`);
        return organization;
      },
    }),
    brand: t.field({
      type: Brand,
      description: 'The brand selected by the Service-Brand header (default: the oldest)',
      resolve: (v, _args, ctx) => retrieveBrand(ctx.deps.db.prisma, v.organizationId, v.brandId),
    }),
    brands: t.field({
      type: [Brand],
      description: 'All brands of the organization, oldest first',
      resolve: (v, _args, ctx) => organizationBrands(ctx.deps.db.prisma, v.organizationId),
    }),
  }),
});

builder.queryField('viewer', (t) =>
  t.field({
    type: Viewer,
    description: 'The caller: its organization, brands and scopes (no scope needed)',
    resolve: (_root, _args, ctx) => ({
      organizationId: ctx.caller.organization.id,
      brandId: ctx.caller.brand.id,
      tokenId: ctx.caller.tokenId,
      scopes: [...ctx.caller.scopes].sort(),
    }),
  }),
);
