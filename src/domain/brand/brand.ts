import { z } from 'zod';
import type { Brand as BrandRow } from '../../db/generated/client.ts';
import { missing } from '../errors.ts';
import { isId } from '../id.ts';
import { capability, read, type Reader } from '../action/action.ts';
import { ListInput, listOf, pageOf } from '../action/list.ts';
import { isoTime } from '../shape.ts';
import { brandOf, brandsAfter, brandsOf, oldestBrand } from './store.ts';

/**
 * Brands: read only. The organization's oldest brand is its default (the one
 * a request without Service-Brand selects); lists are oldest first, paged
 * forward from a `brand_` cursor. Another organization's brand is 404.
 */
export const NoBrandInput = z.strictObject({});

export const Brand = z.object({
  id: z.string().describe('prefix brand_'),
  object: z.literal('brand'),
  organization: z.string().describe('prefix org_: the organization that owns it'),
  slug: z.string(),
  name: z.string(),
  default: z.boolean().describe('true on the oldest brand: the one selected when Service-Brand is absent'),
  created_at: isoTime,
});
export type PublicBrand = z.output<typeof Brand>;

const presentBrand = (b: BrandRow, defaultId: string | undefined): PublicBrand => ({
  id: b.id,
  object: 'brand',
  organization: b.organizationId,
  slug: b.slug,
  name: b.name,
  default: b.id === defaultId,
  created_at: b.createdAt.toISOString(),
});

const defaultBrandId = async (db: Reader, organizationId: string) => (await oldestBrand(db, organizationId))?.id;

async function findBrand(db: Reader, organizationId: string, id: string, param: string | null = null): Promise<BrandRow> {
  const row = isId('brand', id) ? await brandOf(db, organizationId, id) : null;
  if (!row) throw missing('brand', id, param);
  return row;
}

/** One brand of the organization, presented (GraphQL `node(id:)` and the retrieve action). */
export async function retrieveBrand(db: Reader, organizationId: string, id: string): Promise<PublicBrand> {
  const row = await findBrand(db, organizationId, id);
  return presentBrand(row, await defaultBrandId(db, organizationId));
}

/** Every brand of the organization, oldest first (the viewer's `brands`). */
export async function organizationBrands(db: Reader, organizationId: string): Promise<PublicBrand[]> {
  const rows = await brandsOf(db, organizationId);
  return rows.map((b) => presentBrand(b, rows[0]?.id));
}

async function listBrands(db: Reader, organizationId: string, q: z.output<typeof ListInput>) {
  const cursor = q.starting_after === undefined ? undefined : await findBrand(db, organizationId, q.starting_after, 'starting_after');
  const rows = await brandsAfter(db, organizationId, cursor, q.limit + 1);
  const page = pageOf(rows, q.limit);
  const defaultId = await defaultBrandId(db, organizationId);
  return { ...page, data: page.data.map((b) => presentBrand(b, defaultId)) };
}

/** The brand actions (src/domain/action/action.ts). */
export const brands = capability({ name: 'brands', title: 'Brands', scopes: { read: 'org:read' } })({
  /** Oldest first, paged forward: the first brand of the first page is the default. */
  list: read({
    summary: "The organization's brands, oldest first; the first (default: true) is selected when Service-Brand is absent",
    input: ListInput,
    output: listOf(Brand),
    run: ({ caller, input, db }) => listBrands(db, caller.organization.id, input),
  }),
  retrieve: read({
    summary: 'One brand of the organization',
    params: ['id'],
    input: NoBrandInput,
    output: Brand,
    run: ({ caller, params, db }) => retrieveBrand(db, caller.organization.id, params.id),
  }),
});
