import { randomFillSync } from 'node:crypto';

/**
 * Ids are a resource prefix plus a UUIDv7 as 32 hex digits: time-ordered, so
 * "newest first" lists page by id without a separate sort key.
 */
export const ID_PREFIX = {
  organization: 'org',
  brand: 'brand',
  user: 'usr',
  userToken: 'ut',
  platformToken: 'tok',
  unit: 'unit',
  audit: 'aud',
  event: 'evt',
  webhookEndpoint: 'we',
  eventDestination: 'ed',
  entity: 'ent',
  assertion: 'asrt',
  operation: 'op',
  distribution: 'dist',
  deployment: 'dep',
  program: 'prog',
  enrollment: 'enr',
  walletMovement: 'wmv',
  requirement: 'req',
  delivery: 'msg',
  attempt: 'atmpt',
  measurement: 'msr',
  tier: 'tier',
  webhookHealthEvent: 'whe',
  relationship: 'rel',
  ledgerEntry: 'le',
  payout: 'po',
  payoutRun: 'prun',
  connection: 'conn',
  handoffIssuer: 'iss',
  connectSession: 'csn',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${uuidV7Hex()}`;
}

/** Random bytes for ids and request ids, drawn 4 KiB at a time: one `getRandomValues` per id was 4 % of a write request's CPU. */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;
/** Reserves `bytes` fresh random bytes of the pool (refilled when spent); answers where they start. */
function takeRandom(bytes: number): number {
  if (poolAt + bytes > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  poolAt += bytes;
  return poolAt - bytes;
}
const v7 = Buffer.alloc(16);
/** The last id's millisecond and its 42-bit counter (RFC 9562 §6.2, method 1): 12 bits in `rand_a`, 30 after the variant. */
let lastMs = -1;
let counterHigh = 0; // 12 bits
let counterLow = 0; // 30 bits

/**
 * A UUIDv7 (RFC 9562) as 32 hex digits, strictly increasing within the
 * process: 48 bits of Unix milliseconds, a 42-bit counter seeded at random
 * each millisecond (its top bit clear, so it has room to count up), 32
 * random bits. A counter that overflows borrows the next millisecond, as
 * the uuid package's v7 does.
 */
export function uuidV7Hex(): string {
  const r = takeRandom(10);
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    counterHigh = ((pool[r]! & 0x07) << 8) | pool[r + 1]!;
    counterLow = ((pool[r + 2]! & 0x3f) << 24) | (pool[r + 3]! << 16) | (pool[r + 4]! << 8) | pool[r + 5]!;
  } else if (++counterLow > 0x3fffffff) {
    counterLow = 0;
    if (++counterHigh > 0xfff) {
      counterHigh = 0;
      lastMs++;
    }
  }
  v7.writeUIntBE(lastMs, 0, 6);
  v7[6] = 0x70 | (counterHigh >> 8);
  v7[7] = counterHigh & 0xff;
  v7[8] = 0x80 | (counterLow >>> 24);
  v7[9] = (counterLow >>> 16) & 0xff;
  v7[10] = (counterLow >>> 8) & 0xff;
  v7[11] = counterLow & 0xff;
  pool.copy(v7, 12, r + 6, r + 10);
  return v7.toString('hex');
}

const HEX32 = /^[0-9a-f]{32}$/;

/** True when `id` is well-formed for `kind`; callers answer 404 otherwise (never 400: no shape oracle). */
export function isId(kind: IdKind, id: string): boolean {
  const prefix = `${ID_PREFIX[kind]}_`;
  return id.startsWith(prefix) && HEX32.test(id.slice(prefix.length));
}

/** Accepts a prefixed id, or (where the spec allows) a bare uuid with or without dashes. */
export function normalizeId(kind: IdKind, raw: string): string | null {
  if (isId(kind, raw)) return raw;
  const bare = raw.toLowerCase().replaceAll('-', '');
  return HEX32.test(bare) ? `${ID_PREFIX[kind]}_${bare}` : null;
}

/** A request id (`Request-Id` header, error bodies, logs): random, not time-ordered, one per HTTP request or graphql-ws operation. */
export const newRequestId = (): string => `req_${randomHex(12)}`;

/** `bytes` random bytes from the pool as hex. */
function randomHex(bytes: number): string {
  const at = takeRandom(bytes);
  return pool.toString('hex', at, at + bytes);
}
