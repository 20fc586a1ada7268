import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import type { HandoffIssuer as IssuerRow } from '../../db/generated/client.ts';
import type { Prisma, Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { capability, mutation, read, type Reader } from '../action/action.ts';
import { ListInput, listOf, newestFirst } from '../action/list.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { generateSecret } from '../secret.ts';
import { SECRET_OVERLAP_MS } from '../webhook/endpoint.ts';
import { isoTime } from '../shape.ts';
import { deleteIssuerRow, insertIssuerRow, issuerOfBrand, issuersPage, updateIssuerRow } from './store.ts';

/**
 * Signed-handoff issuers (`iss_`), per brand: a partner site signs a
 * short-lived handoff token with one to identify its user to the connect
 * flow. HS256 issuers hold a shared secret: generated (`hsk_...`) unless the
 * caller brings one of at least 32 characters, shown in the create and
 * rotate answers only, and stored as it is, like webhook signing secrets,
 * since verifying needs it (the project holds no encryption key). EdDSA
 * issuers hold an Ed25519 public key, given as a JWK or an SPKI PEM and
 * stored as a JWK. A rotation installs a new secret or key; the previous one
 * keeps verifying for 24 h (as webhook secrets overlap).
 */
export const HANDOFF_ALGORITHMS = ['HS256', 'EdDSA'] as const;
export type HandoffAlgorithm = (typeof HANDOFF_ALGORITHMS)[number];
const SECRET_PREFIX = 'hsk_';

/** RFC 7518 §3.2: an HS256 key is at least 256 bits. */
const secret = z.string().min(32).max(512).describe('HS256 only; generated (hsk_...) when omitted');
const publicKey = z
  .union([z.string().min(1).max(4096), z.record(z.string(), z.unknown())])
  .describe('EdDSA only: an Ed25519 public key, as a JWK {kty: "OKP", crv: "Ed25519", x} or an SPKI PEM');

export const CreateHandoffIssuerInput = z.strictObject({
  name: z.string().min(1).max(200),
  algorithm: z.enum(HANDOFF_ALGORITHMS),
  secret: secret.optional(),
  public_key: publicKey.optional(),
});

export const RotateHandoffIssuerInput = z.strictObject({ secret: secret.optional(), public_key: publicKey.optional() });
export const ListHandoffIssuersInput = z.strictObject({ ...ListInput.shape });
export const NoHandoffIssuerInput = z.strictObject({});

const Jwk = z.record(z.string(), z.unknown());

export const HandoffIssuer = z.object({
  id: z.string().describe('prefix iss_; the `iss` claim of its handoff tokens'),
  object: z.literal('handoff_issuer'),
  brand: z.string(),
  name: z.string(),
  algorithm: z.enum(HANDOFF_ALGORITHMS),
  public_key: Jwk.nullable().describe('EdDSA: the public key as a JWK'),
  secret: z.string().optional().describe('HS256: only in the create and rotate answers'),
  previous_expires_at: isoTime.nullable().describe('until when the key or secret a rotation replaced still verifies'),
  rotated_at: isoTime.nullable(),
  livemode: z.boolean(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type PublicHandoffIssuer = z.output<typeof HandoffIssuer>;

export const DeletedHandoffIssuer = z.object({ id: z.string(), object: z.literal('handoff_issuer'), deleted: z.literal(true) });

export function presentHandoffIssuer(row: IssuerRow, shown: { secret?: string } = {}): PublicHandoffIssuer {
  return {
    id: row.id,
    object: 'handoff_issuer',
    brand: row.brandId,
    name: row.name,
    algorithm: row.algorithm as HandoffAlgorithm,
    public_key: (row.publicKey as Record<string, unknown> | null) ?? null,
    ...(shown.secret ? { secret: shown.secret } : {}),
    previous_expires_at: row.previousExpiresAt?.toISOString() ?? null,
    rotated_at: row.rotatedAt?.toISOString() ?? null,
    livemode: true,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** An Ed25519 public key from a JWK or an SPKI PEM, as a JWK; anything else (a private key included) is 400 naming `public_key`. */
function ed25519Jwk(value: string | Record<string, unknown>): JsonWebKey {
  const refuse = (why: string) => new DomainError('invalid_request', `public_key ${why}`, 'public_key');
  // createPublicKey would derive a public key from a private one: a private key sent here is refused, never used.
  if (typeof value === 'object' && 'd' in value) throw refuse('must be a public key: the JWK carries a private part (d)');
  if (typeof value === 'string' && !value.trim().startsWith('-----BEGIN PUBLIC KEY-----'))
    throw refuse('must be a public key: a PEM starts with -----BEGIN PUBLIC KEY----- (SPKI)');
  let key: KeyObject;
  try {
    key = typeof value === 'string' ? createPublicKey(value) : createPublicKey({ key: value as JsonWebKey, format: 'jwk' });
  } catch {
    throw refuse('must be an Ed25519 public key as a JWK {kty: "OKP", crv: "Ed25519", x} or an SPKI PEM');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw refuse(`must be an Ed25519 key, not ${key.asymmetricKeyType}`);
  return key.export({ format: 'jwk' });
}

/** What the algorithm takes: HS256 a secret (generated when omitted), EdDSA a public key; the other field is refused. */
function keyMaterial(algorithm: HandoffAlgorithm, input: { secret?: string; public_key?: string | Record<string, unknown> }) {
  if (algorithm === 'HS256') {
    if (input.public_key !== undefined)
      throw new DomainError('invalid_request', 'An HS256 issuer takes a secret, not a public_key', 'public_key');
    return { secret: input.secret ?? generateSecret(SECRET_PREFIX), publicKey: null };
  }
  if (input.secret !== undefined) throw new DomainError('invalid_request', 'An EdDSA issuer takes a public_key, not a secret', 'secret');
  if (input.public_key === undefined) throw new DomainError('invalid_request', 'An EdDSA issuer needs its public_key', 'public_key');
  return { secret: null, publicKey: ed25519Jwk(input.public_key) };
}

async function findIssuer(db: Reader, caller: SurfaceBCaller, id: string, param: string | null = null): Promise<IssuerRow> {
  const row = isId('handoffIssuer', id) ? await issuerOfBrand(db, caller.organization.id, caller.brand.id, id) : null;
  if (!row) throw missing('handoff_issuer', id, param);
  return row;
}

async function createIssuer(deps: Deps, tx: Tx, caller: SurfaceBCaller, input: z.output<typeof CreateHandoffIssuerInput>) {
  const material = keyMaterial(input.algorithm, input);
  const now = deps.clock.now();
  const row = await insertIssuerRow(tx, {
    id: newId('handoffIssuer'),
    organizationId: caller.organization.id,
    brandId: caller.brand.id,
    name: input.name,
    algorithm: input.algorithm,
    secret: material.secret,
    publicKey: (material.publicKey as Prisma.InputJsonObject | null) ?? undefined,
    createdAt: now,
    updatedAt: now,
  });
  return presentHandoffIssuer(row, { secret: material.secret ?? undefined });
}

/** Installs a new secret or key; the one it replaces verifies for 24 h more (an older previous one is dropped). */
async function rotateIssuer(deps: Deps, tx: Tx, caller: SurfaceBCaller, id: string, input: z.output<typeof RotateHandoffIssuerInput>) {
  const row = await findIssuer(tx, caller, id);
  const material = keyMaterial(row.algorithm as HandoffAlgorithm, input);
  const now = deps.clock.now();
  const updated = await updateIssuerRow(tx, row.id, {
    secret: material.secret,
    publicKey: (material.publicKey as Prisma.InputJsonObject | null) ?? undefined,
    previousSecret: row.secret,
    previousPublicKey: (row.publicKey as Prisma.InputJsonObject | null) ?? undefined,
    previousExpiresAt: new Date(now.getTime() + SECRET_OVERLAP_MS),
    rotatedAt: now,
    updatedAt: now,
  });
  return presentHandoffIssuer(updated, { secret: material.secret ?? undefined });
}

/** Hard delete: the issuer and its secrets or keys are gone; its handoff tokens no longer verify. */
async function deleteIssuer(tx: Tx, caller: SurfaceBCaller, id: string) {
  const row = await findIssuer(tx, caller, id);
  await deleteIssuerRow(tx, row.id);
  return { id: row.id, object: 'handoff_issuer' as const, deleted: true as const };
}

/** The handoff issuer actions (src/domain/action/action.ts), in the selected brand. */
export const handoffIssuers = capability({ name: 'handoff_issuers', title: 'Handoff issuers', resource: 'handoff' })({
  create: mutation({
    summary:
      'Register a handoff issuer: HS256 (a secret, generated when omitted, shown in this answer only) or EdDSA (an Ed25519 public key, JWK or PEM)',
    input: CreateHandoffIssuerInput,
    output: HandoffIssuer,
    outcome: 'created',
    revealsSecret: ['secret'],
    run: ({ deps, caller, input, db }) => createIssuer(deps, db, caller, input),
  }),
  rotate: mutation({
    summary:
      'Install a new secret (HS256: generated when omitted, shown in this answer only) or public key (EdDSA); the previous one verifies for 24 h',
    params: ['id'],
    input: RotateHandoffIssuerInput,
    output: HandoffIssuer,
    outcome: 'ok',
    revealsSecret: ['secret'],
    run: ({ deps, caller, params, input, db }) => rotateIssuer(deps, db, caller, params.id, input),
  }),
  delete: mutation({
    summary: 'Delete a handoff issuer: its tokens no longer verify',
    params: ['id'],
    input: NoHandoffIssuerInput,
    output: DeletedHandoffIssuer,
    outcome: 'ok',
    run: ({ caller, params, db }) => deleteIssuer(db, caller, params.id),
  }),
  list: read({
    summary: "The brand's handoff issuers, newest first (never their secrets)",
    input: ListHandoffIssuersInput,
    output: listOf(HandoffIssuer),
    run: async ({ caller, input, db }) => {
      const page = await newestFirst(
        input,
        (id, param) => findIssuer(db, caller, id, param),
        (below, take) => issuersPage(db, caller.organization.id, caller.brand.id, below, take),
      );
      return { ...page, data: page.data.map((r) => presentHandoffIssuer(r)) };
    },
  }),
  retrieve: read({
    summary: 'One handoff issuer of the brand (never its secret)',
    params: ['id'],
    retrieves: 'handoffIssuer',
    input: NoHandoffIssuerInput,
    output: HandoffIssuer,
    run: async ({ caller, params, db }) => presentHandoffIssuer(await findIssuer(db, caller, params.id)),
  }),
});
