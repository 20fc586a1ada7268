import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Deps } from '../context.ts';
import { isDomainError } from '../errors.ts';
import { generateOperatorToken } from '../operator/operator-token.ts';
import { ALL_SCOPES } from '../scope/catalogue.ts';
import { insertPlatformToken } from '../token/platform-token.ts';
import { createOrganization } from './organization.ts';

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
  if ((await deps.db.prisma.organization.count()) > 0) return undefined;
  let created;
  try {
    created = await createOrganization(deps, {
      name: 'Development',
      slug: 'dev',
      brands: [
        { slug: 'dev', name: 'Dev' },
        { slug: 'second', name: 'Second' },
      ],
    });
  } catch (e) {
    // Another process sharing this PostgreSQL database bootstrapped first: not an error.
    if (isDomainError(e) && e.code === 'resource_conflict') return undefined;
    throw e;
  }
  const { token, secret } = await deps.db.transaction((tx) =>
    insertPlatformToken(deps, tx, { organizationId: created.organization.id, userId: created.user.id, name: 'bootstrap (all scopes)', scopes: ALL_SCOPES }),
  );
  const credentials: DevCredentials = {
    ...urls,
    operator_token: await generateOperatorToken(deps),
    organization: { id: created.organization.id, slug: created.organization.slug, name: created.organization.name },
    brands: created.brands.map((b) => ({ id: b.id, slug: b.slug })),
    user_token: created.user_token,
    platform_token: { id: token.id, secret, scopes: token.scopes },
  };
  const file = deps.config.bootstrapFile;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return credentials;
}
