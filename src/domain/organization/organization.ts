import { z } from 'zod';
import type { Tx } from '../../db/database.ts';
import { ListInput, newestFirst, type Page } from '../action/list.ts';
import type { Deps } from '../context.ts';
import { DomainError, isUniqueViolation, missing } from '../errors.ts';
import { newId } from '../id.ts';
import { issueUserToken } from '../token/user-token.ts';
import { parseInput } from '../validation.ts';
import { insertBrand } from '../brand/store.ts';
import { insertOrganizationRow, insertUser, organizationsPage, organizationWithBrands, type OrganizationWithBrands } from './store.ts';

const slug = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lowercase letters, digits and dashes, at most 63');

export const CreateOrganizationInput = z.strictObject({
  name: z.string().trim().min(1).max(200),
  slug,
  brands: z
    .array(z.strictObject({ slug, name: z.string().trim().min(1).max(200) }))
    .min(1, 'an organization needs at least one brand')
    .max(50)
    .refine((b) => new Set(b.map((x) => x.slug)).size === b.length, 'brand slugs must be unique'),
});

export interface CreatedOrganization {
  organization: { id: string; slug: string; name: string; created_at: string };
  brands: { id: string; slug: string; name: string; created_at: string }[];
  user: { id: string };
  user_token: string;
}

/**
 * Creates an organization, its brands (in the given order: the first is the
 * oldest, hence the default brand) and a first dashboard user with a token.
 */
export async function createOrganization(deps: Deps, raw: unknown): Promise<CreatedOrganization> {
  const input = parseInput(CreateOrganizationInput, raw);
  try {
    return await deps.db.transaction((tx) => insertOrganization(deps, tx, input));
  } catch (e) {
    if (isUniqueViolation(e)) throw new DomainError('resource_conflict', `Organization slug '${input.slug}' is taken`, 'slug');
    throw e;
  }
}

export async function insertOrganization(
  deps: Deps,
  tx: Tx,
  input: z.output<typeof CreateOrganizationInput>,
): Promise<CreatedOrganization> {
  const t0 = deps.clock.now().getTime();
  const org = await insertOrganizationRow(tx, { id: newId('organization'), slug: input.slug, name: input.name, createdAt: new Date(t0) });
  const brands = [];
  for (const [i, b] of input.brands.entries()) {
    // Distinct creation times keep "oldest brand" well defined.
    brands.push(
      await insertBrand(tx, { id: newId('brand'), organizationId: org.id, slug: b.slug, name: b.name, createdAt: new Date(t0 + i) }),
    );
  }
  const user = await insertUser(tx, { id: newId('user'), organizationId: org.id, name: 'owner' });
  const userToken = await issueUserToken(tx, user.id, deps.clock.now());
  deps.failedAuthentication?.issued(userToken);
  return {
    organization: { id: org.id, slug: org.slug, name: org.name, created_at: org.createdAt.toISOString() },
    brands: brands.map((b) => ({ id: b.id, slug: b.slug, name: b.name, created_at: b.createdAt.toISOString() })),
    user: { id: user.id },
    user_token: userToken,
  };
}

const BrandSummary = z.object({ id: z.string(), slug: z.string(), name: z.string(), created_at: z.string() });
/** An organization as the operator reads it: its brands oldest first (the first is the default brand). */
export const OperatorOrganization = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  created_at: z.string(),
  brands: z.array(BrandSummary),
});
export type OperatorOrganization = z.output<typeof OperatorOrganization>;

const presentOrganization = (o: OrganizationWithBrands): OperatorOrganization => ({
  id: o.id,
  slug: o.slug,
  name: o.name,
  created_at: o.createdAt.toISOString(),
  brands: o.brands.map((b) => ({ id: b.id, slug: b.slug, name: b.name, created_at: b.createdAt.toISOString() })),
});

async function findOrganization(deps: Deps, id: string, param: string | null = null): Promise<OrganizationWithBrands> {
  const org = await organizationWithBrands(deps.db.prisma, id);
  if (!org) throw missing('organization', id, param);
  return org;
}

/** Every organization, newest first, in the list shape (`limit`, `starting_after`). */
export async function listOrganizations(deps: Deps, raw: unknown): Promise<Page<OperatorOrganization>> {
  const q = parseInput(ListInput, raw);
  const page = await newestFirst(
    q,
    (id, param) => findOrganization(deps, id, param),
    (below, take) => organizationsPage(deps.db.prisma, below, take),
  );
  return { ...page, data: page.data.map(presentOrganization) };
}

export async function retrieveOrganization(deps: Deps, id: string): Promise<OperatorOrganization> {
  return presentOrganization(await findOrganization(deps, id));
}

export { lockOrganization } from './store.ts';
