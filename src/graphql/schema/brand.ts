import { Brand as BrandShape, brands } from '../../domain/brand/brand.ts';
import { connectionAction, queryAction } from '../action.ts';
import { objectType } from '../derive.ts';
import { Node } from './node.ts';

/** Brands of the organization (read only); the viewer's `brand` and `brands` answer the same objects. */
export const Brand = objectType('Brand', BrandShape, {
  description: 'A brand of the organization; Service-Brand selects one per request',
  interfaces: [Node],
});

connectionAction('brands', brands.list, {
  type: Brand,
  description: "The organization's brands, oldest first; the first is the default (scope org:read). Cursors are brand_ ids.",
});

queryAction('brand', brands.retrieve, {
  description: 'One brand of the organization by brand_ id (scope org:read)',
  type: Brand,
});
