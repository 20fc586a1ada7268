import type { Deps, PlatformCaller } from '../context.ts';
import { DomainError } from '../errors.ts';
import { classifyKey } from './key-kind.ts';
import type { ClientKey } from './failed-authentication.ts';
import { authenticatePlatformSecret } from './platform-token.ts';

/**
 * One authentication path for every platform-token surface (Surface A,
 * Surface B, GraphQL): test-mode prefixes are refused first, a publishable
 * key is never enough, anything else must be a live, active secret key.
 * `client`: whose failed-authentication bucket a bad key spends from.
 */
export async function authenticatePlatformKey(
  deps: Deps,
  key: string,
  asOf = performance.now(),
  client?: ClientKey,
): Promise<PlatformCaller> {
  const kind = classifyKey(key, deps.config.keyBrand);
  if (kind === 'publishable') {
    throw new DomainError(
      'publishable_key_not_allowed',
      'Publishable keys (pk_live_) only work for partner-connect flows; use a secret key',
    );
  }
  return authenticatePlatformSecret(deps, key, asOf, client);
}
