import { DomainError } from '../errors.ts';

/**
 * What a presented key claims to be, from its prefix alone. Test-mode
 * prefixes are reserved: they answer 400 before any other check.
 */
export type KeyKind = 'secret' | 'publishable' | 'unknown';

export const PUBLISHABLE_KEY_PREFIX = 'pk_live_';
export const secretKeyPrefix = (keyBrand: string) => `sk_${keyBrand}_live_`;

const isTestMode = (key: string, keyBrand: string) =>
  key.startsWith('sk_test_') || key.startsWith('pk_test_') || key.startsWith(`sk_${keyBrand}_test_`);

export function classifyKey(key: string, keyBrand: string): KeyKind {
  if (isTestMode(key, keyBrand)) {
    throw new DomainError(
      'test_mode_not_yet_available',
      'Test mode keys are reserved and not yet available; use a live key. Every object carries `livemode`.',
    );
  }
  if (key.startsWith(PUBLISHABLE_KEY_PREFIX)) return 'publishable';
  if (key.startsWith(secretKeyPrefix(keyBrand))) return 'secret';
  return 'unknown';
}
