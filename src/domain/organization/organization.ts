import { z } from 'zod';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, isUniqueViolation } from '../errors.ts';
import { newId } from '../id.ts';
import { issueUserToken } from '../token/user-token.ts';
import { parseInput } from '../validation.ts';

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
  const org = await tx.organization.create({
    data: { id: newId('organization'), slug: input.slug, name: input.name, createdAt: new Date(t0) },
  });
  const brands = [];
  for (const [i, b] of input.brands.entries()) {
    // Distinct creation times keep "oldest brand" well defined.
    brands.push(
      await tx.brand.create({
        data: { id: newId('brand'), organizationId: org.id, slug: b.slug, name: b.name, createdAt: new Date(t0 + i) },
      }),
    );
  }
  const user = await tx.user.create({ data: { id: newId('user'), organizationId: org.id, name: 'owner' } });
  const userToken = await issueUserToken(tx, user.id, deps.clock.now());
  return {
    organization: { id: org.id, slug: org.slug, name: org.name, created_at: org.createdAt.toISOString() },
    brands: brands.map((b) => ({ id: b.id, slug: b.slug, name: b.name, created_at: b.createdAt.toISOString() })),
    user: { id: user.id },
    user_token: userToken,
  };
}
