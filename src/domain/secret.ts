import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Secrets: random base62 bodies with a CRC32 checksum suffix (as GitHub's
 * `ghp_` tokens carry) so secret scanners can recognise a real key offline.
 * Only SHA-256 hashes are stored; the plaintext is shown once.
 */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length)) {
      if (b < 248 && out.length < length) out += BASE62[b % 62]; // 248 = 4 * 62: no modulo bias
    }
  }
  return out;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

export function crc32(s: string): number {
  let c = 0xffffffff;
  for (const byte of Buffer.from(s)) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < 6; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** `<prefix><30 random base62><6 checksum>`. */
export function generateSecret(prefix: string): string {
  const body = randomBase62(30);
  return `${prefix}${body}${checksum(body)}`;
}

/** True when the checksum suffix matches: cheap rejection of typos and garbage before any lookup. */
export function hasValidChecksum(secret: string, prefix: string): boolean {
  if (!secret.startsWith(prefix)) return false;
  const rest = secret.slice(prefix.length);
  if (rest.length !== 36) return false;
  return checksum(rest.slice(0, 30)) === rest.slice(30);
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Safe display prefix: the key kind plus four characters, never enough to use. */
export function displayPrefix(secret: string, prefix: string): string {
  return secret.slice(0, prefix.length + 4);
}
