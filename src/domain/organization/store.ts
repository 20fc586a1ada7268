import type { Prisma } from '../../db/database.ts';
import type { Organization, PrismaClient } from '../../db/generated/client.ts';

/** An organization by id (null: none); `query` is a GraphQL selection (Pothos' `query`) to spread into the lookup. */
export function organizationById(
  db: PrismaClient,
  id: string,
  query: { select?: Prisma.OrganizationSelect; include?: Prisma.OrganizationInclude } = {},
): Promise<Organization | null> {
  return db.organization.findUnique({ ...query, where: { id } });
}
