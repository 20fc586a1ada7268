import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

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
  return `${ID_PREFIX[kind]}_${uuidv7().replaceAll('-', '')}`;
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
export const newRequestId = (): string => `req_${randomBytes(12).toString('hex')}`;
