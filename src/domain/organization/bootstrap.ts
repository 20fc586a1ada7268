import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Deps } from '../context.ts';
import { isUniqueViolation } from '../errors.ts';
import { generateOperatorToken } from '../operator/operator-token.ts';
import { ALL_SCOPES } from '../scope/catalogue.ts';
import { insertPlatformToken } from '../token/platform-token.ts';
import { insertOrganization } from './organization.ts';
import { countOrganizations } from './store.ts';

export interface ServiceUrls {
  base_url: string;
  dashboard_base_url: string;
  api_origin: string;
  graphql_url: string;
}

export interface DevCredentials extends ServiceUrls {
  operator_token: string;
  organization: { id: string; slug: string; name: string };
  brands: { id: string; slug: string }[];
  user_token: string;
  platform_token: { id: string; secret: string; scopes: string[] };
}

/**
 * On an empty database, creates a development organization (brands `dev`
 * then `second`), a dashboard user token, an all-scopes platform token and an
 * operator token, and writes them to BOOTSTRAP_FILE with mode 0600.
 * Returns undefined when the database already holds an organization.
 */
export async function bootstrapIfEmpty(deps: Deps, urls: ServiceUrls): Promise<DevCredentials | undefined> {
  if ((await countOrganizations(deps.db.prisma)) > 0) return undefined;
  // One transaction: a crash part-way leaves an empty database that bootstraps
  // again on the next start, never an organization without credentials.
  let credentials: DevCredentials;
  try {
    credentials = await deps.db.transaction(async (tx) => {
      const created = await insertOrganization(deps, tx, {
        name: 'Development',
        slug: 'dev',
        brands: [
          { slug: 'dev', name: 'Dev' },
          { slug: 'second', name: 'Second' },
        ],
      });
      const { token, secret } = await insertPlatformToken(deps, tx, {
        organizationId: created.organization.id,
        userId: created.user.id,
        name: 'bootstrap (all scopes)',
        scopes: ALL_SCOPES,
      });
      return {
        ...urls,
        operator_token: await generateOperatorToken(deps, tx),
        organization: { id: created.organization.id, slug: created.organization.slug, name: created.organization.name },
        brands: created.brands.map((b) => ({ id: b.id, slug: b.slug })),
        user_token: created.user_token,
        platform_token: { id: token.id, secret, scopes: token.scopes },
      };
    });
  } catch (e) {
    // Another process sharing this PostgreSQL database bootstrapped first: not an error.
    if (isUniqueViolation(e)) return undefined;
    throw e;
  }
  const file = deps.config.bootstrapFile;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return credentials;
}
