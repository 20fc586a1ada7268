import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { EncryptionKey } from '../config.ts';
import { DomainError } from './errors.ts';

export type { EncryptionKey };

/**
 * Encryption at rest of the credentials the product must use again (an event destination's broker URL), unlike
 * tokens, of which only a hash is kept. AES-256-GCM under the keys of ENCRYPTION_KEYS: the first encrypts, every
 * key decrypts what it encrypted, so a new key is put first and the old one kept second until `platform
 * reencrypt-credentials` has moved every ciphertext to the new one. A ciphertext names its key and is bound to the
 * row it belongs to (additional data), so it cannot be copied onto another row.
 *
 *   v1.<key id>.<iv, base64url>.<ciphertext and 16-byte tag, base64url>
 */
const VERSION = 'v1';

/** Encrypts under the current key (the first); 400 encryption_key_not_configured without one. */
export function encryptSecret(keys: readonly EncryptionKey[] | undefined, plaintext: string, boundTo: string, param: string): string {
  const current = keys?.[0];
  if (!current)
    throw new DomainError(
      'encryption_key_not_configured',
      'This server has no encryption key (ENCRYPTION_KEYS), so it cannot store credentials; ask its operator, or use a URL without credentials',
      param,
    );
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', current.key, iv);
  cipher.setAAD(Buffer.from(boundTo));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return [VERSION, current.id, iv.toString('base64url'), body.toString('base64url')].join('.');
}

/** The id of the key a ciphertext was made with (null: not a ciphertext of this format). */
export function keyIdOf(ciphertext: string): string | null {
  const [version, id] = ciphertext.split('.');
  return version === VERSION && id ? id : null;
}

export class UndecryptableSecret extends Error {}

/** Decrypts with the key the ciphertext names; throws UndecryptableSecret when that key is not configured or the text was altered. */
export function decryptSecret(keys: readonly EncryptionKey[] | undefined, ciphertext: string, boundTo: string): string {
  const [version, id, iv, body] = ciphertext.split('.');
  const key = keys?.find((k) => k.id === id);
  if (version !== VERSION || !iv || !body) throw new UndecryptableSecret('not a ciphertext of this server');
  if (!key) throw new UndecryptableSecret(`its encryption key ${id} is not in ENCRYPTION_KEYS`);
  const bytes = Buffer.from(body, 'base64url');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
  } catch {
    throw new UndecryptableSecret(`it does not decrypt under key ${id}`);
  }
}
