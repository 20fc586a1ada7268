import type { Prisma, Tx } from '../../db/database.ts';
import type { Brand, Organization, PrismaClient, User } from '../../db/generated/client.ts';

/** The organization capability's SQL: organizations and their dashboard users. */
export type OrganizationWithBrands = Organization & { brands: Brand[] };

const withBrands = { brands: { orderBy: [{ createdAt: 'asc' as const }, { id: 'asc' as const }] } };

export function countOrganizations(db: PrismaClient): Promise<number> {
  return db.organization.count();
}

export function insertOrganizationRow(tx: Tx, row: Pick<Organization, 'id' | 'slug' | 'name' | 'createdAt'>): Promise<Organization> {
  return tx.organization.create({ data: row });
}

export function insertUser(tx: Tx, row: Pick<User, 'id' | 'organizationId' | 'name'>): Promise<User> {
  return tx.user.create({ data: row });
}

/** An organization with its brands oldest first. */
export function organizationWithBrands(db: PrismaClient, id: string): Promise<OrganizationWithBrands | null> {
  return db.organization.findUnique({ where: { id }, include: withBrands });
}

/** Up to `take` organizations below a cursor, newest first, each with its brands. */
export function organizationsPage(db: PrismaClient, below: { id?: { lt: string } }, take: number): Promise<OrganizationWithBrands[]> {
  return db.organization.findMany({ where: below, orderBy: { id: 'desc' }, take, include: withBrands });
}

/**
 * Locks the organization's row until the transaction ends. A creation that counts against one of its caps
 * (docs/security.md, "Abuse limits") takes it before counting, so two concurrent creations at the cap minus one
 * cannot both pass: the second counts after the first commits.
 */
export async function lockOrganization(tx: Tx, organizationId: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM organization WHERE id = ${organizationId} FOR UPDATE`;
}

/** An organization by id (null: none); `query` is a GraphQL selection (Pothos' `query`) to spread into the lookup. */
export function organizationById(
  db: PrismaClient,
  id: string,
  query: { select?: Prisma.OrganizationSelect; include?: Prisma.OrganizationInclude } = {},
): Promise<Organization | null> {
  return db.organization.findUnique({ ...query, where: { id } });
}
