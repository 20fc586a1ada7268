import type { Deps } from '../../src/domain/context.ts';
import { brands } from '../../src/domain/brand/brand.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** The organization's brands (read only); the oldest is the default Service-Brand. */
export function brandRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Brands', errors: [400, 401, 403, 404, 429, 503] };
  return [
    actionRoute(deps, brands.list, {
      ...common,
      method: 'GET',
      path: '/brands',
      operationId: 'listBrands',
      summary: "The organization's brands, oldest first; the first (default: true) is selected when Service-Brand is absent",
      description: 'A page of brands',
    }),
    actionRoute(deps, brands.retrieve, {
      ...common,
      method: 'GET',
      path: '/brands/:id',
      operationId: 'retrieveBrand',
      summary: 'One brand of the organization',
      description: 'The brand',
    }),
  ];
}
