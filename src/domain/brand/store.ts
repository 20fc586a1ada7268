import type { Tx } from '../../db/database.ts';
import type { Brand, PrismaClient } from '../../db/generated/client.ts';

/** The brand capability's SQL. Lists run oldest first: the oldest brand is the organization's default. */
type Reader = Pick<Tx, 'brand'> | PrismaClient;

const OLDEST_FIRST = [{ createdAt: 'asc' as const }, { id: 'asc' as const }];
const SUMMARY = { id: true, slug: true, name: true } as const;

export type BrandSummary = Pick<Brand, 'id' | 'slug' | 'name'>;

/** Locks the brand's row for the transaction: the serialization point of a brand's ledger and payout runs. */
export async function lockBrand(tx: Tx, id: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM brand WHERE id = ${id} FOR UPDATE`;
}

/** A brand named by its id or as `<organization slug>.<brand slug>`, with its organization: the operator's wallet routes. */
export function brandByRef(
  db: Reader,
  ref: { id: string } | { organizationSlug: string; slug: string },
): Promise<Pick<Brand, 'id' | 'organizationId'> | null> {
  const select = { id: true, organizationId: true } as const;
  return 'id' in ref
    ? db.brand.findFirst({ where: { id: ref.id }, select })
    : db.brand.findFirst({ where: { slug: ref.slug, organization: { slug: ref.organizationSlug } }, select });
}

/** The organization's oldest brand: its default. */
export function oldestBrand(db: Reader, organizationId: string): Promise<BrandSummary | null> {
  return db.brand.findFirst({ where: { organizationId }, orderBy: OLDEST_FIRST, select: SUMMARY });
}

/** A brand of the organization by id or slug. */
export function brandByIdOrSlug(db: Reader, organizationId: string, wanted: string): Promise<BrandSummary | null> {
  return db.brand.findFirst({ where: { organizationId, OR: [{ id: wanted }, { slug: wanted }] }, select: SUMMARY });
}

export function brandOf(db: Reader, organizationId: string, id: string): Promise<Brand | null> {
  return db.brand.findFirst({ where: { id, organizationId } });
}

export function brandsOf(db: Reader, organizationId: string): Promise<Brand[]> {
  return db.brand.findMany({ where: { organizationId }, orderBy: OLDEST_FIRST });
}

/** Up to `take` brands after `cursor` (oldest first). */
export function brandsAfter(db: Reader, organizationId: string, cursor: Brand | undefined, take: number): Promise<Brand[]> {
  return db.brand.findMany({
    where: {
      organizationId,
      ...(cursor ? { OR: [{ createdAt: { gt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { gt: cursor.id } }] } : {}),
    },
    orderBy: OLDEST_FIRST,
    take,
  });
}

export function insertBrand(tx: Tx, row: Pick<Brand, 'id' | 'organizationId' | 'slug' | 'name' | 'createdAt'>): Promise<Brand> {
  return tx.brand.create({ data: row });
}
