import { brands, type PublicBrand } from '../../domain/brand/brand.ts';
import { connectionAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { Node } from './node.ts';

/** Brands of the organization (read only); the viewer's `brand` and `brands` answer the same objects. */
export const Brand = builder.objectRef<PublicBrand>('Brand').implement({
  description: 'A brand of the organization; Service-Brand selects one per request',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    slug: t.exposeString('slug'),
    name: t.exposeString('name'),
    default: t.exposeBoolean('default', { description: 'true on the oldest brand: the one selected when Service-Brand is absent' }),
    createdAt: t.field({ type: 'DateTime', resolve: (b) => b.created_at }),
  }),
});

connectionAction('brands', brands.list, {
  type: Brand,
  description: "The organization's brands, oldest first; the first is the default (scope org:read). Cursors are brand_ ids.",
  input: () => ({}),
});

queryAction('brand', brands.retrieve, {
  description: 'One brand of the organization by brand_ id (scope org:read)',
  type: Brand,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
});
