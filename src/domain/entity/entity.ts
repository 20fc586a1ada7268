import { z } from 'zod';
import type { Entity } from '../../db/generated/client.ts';
import type { Prisma, Tx } from '../../db/database.ts';
import {
  entityByExternalId,
  entityOf,
  insertExternalEntity,
  insertExternalEntityStatement,
  lockEntity,
  lockSubjectStatement,
  type Subject,
} from './store.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';

/**
 * Entities are the subjects of claims and enrollments, organization-scoped.
 * A caller names one either by its `ent_` id or by its own
 * (`external_user_id`, `issuer`) pair, which resolves to the same entity on
 * every call and creates it on first use where the route writes.
 */
/** An external user id or issuer: 1 to 255 characters, no NUL. */
export const externalPart = z
  .string()
  .min(1)
  .max(255)
  .refine((v) => !v.includes('\u0000'), 'must not contain NUL characters');

/** The subject fields, spread into every input schema that addresses an entity. */
export const subjectFields = {
  entity: z.string().min(1).optional(),
  external_user_id: externalPart.optional(),
  issuer: externalPart.optional(),
};

export type SubjectInput = { entity?: string; external_user_id?: string; issuer?: string };

export type { Subject };

/** Exactly one subject form: `entity`, or `external_user_id` with `issuer` (never one of the pair alone). */
export function subjectOf(input: SubjectInput): Subject {
  const { entity, external_user_id: ext, issuer } = input;
  if (entity !== undefined) {
    if (ext !== undefined || issuer !== undefined) {
      throw new DomainError(
        'invalid_request',
        'Give either entity or external_user_id with issuer, not both',
        ext !== undefined ? 'external_user_id' : 'issuer',
      );
    }
    return { kind: 'entity', id: entity };
  }
  if (ext === undefined && issuer === undefined) {
    throw new DomainError('invalid_request', 'A subject is required: entity, or external_user_id with issuer', 'entity');
  }
  if (ext === undefined) throw new DomainError('invalid_request', 'issuer must be sent together with external_user_id', 'external_user_id');
  if (issuer === undefined) throw new DomainError('invalid_request', 'external_user_id must be sent together with issuer', 'issuer');
  return { kind: 'external', externalUserId: ext, issuer };
}

type Reader = Tx | Deps['db']['prisma'];

/** The entity a subject names, or null for an external pair never seen; an unknown `ent_` id is 404. */
export async function findEntity(db: Reader, organizationId: string, subject: Subject): Promise<Entity | null> {
  if (subject.kind === 'entity') {
    const row = isId('entity', subject.id) ? await entityOf(db, organizationId, subject.id) : null;
    if (!row) throw missing('entity', subject.id, 'entity');
    return row;
  }
  return entityByExternalId(db, organizationId, subject.externalUserId, subject.issuer);
}

/**
 * The entity a subject names, created on first use for an external pair.
 * ON CONFLICT DO NOTHING makes concurrent first uses converge on one row.
 */
export async function ensureEntity(deps: Deps, tx: Tx, organizationId: string, subject: Subject): Promise<Entity> {
  const found = await findEntity(tx, organizationId, subject);
  if (found || subject.kind === 'entity') return found!;
  await insertExternalEntity(tx, createEntity(deps, organizationId, subject));
  return (await findEntity(tx, organizationId, subject))!;
}

const createEntity = (deps: Deps, organizationId: string, subject: Extract<Subject, { kind: 'external' }>): Prisma.Sql =>
  insertExternalEntityStatement(newId('entity'), organizationId, subject, deps.clock.now());

/**
 * ensureEntity (with `create`) or findEntity, then lockEntity, as statements
 * for one batch of the SQL port; the statements after them in the batch see
 * what the lock's previous holder committed. An unknown `ent_` id is 404
 * before any statement runs; whether the entity exists shows in the batch's
 * later statements (subjectEntity finds no row).
 */
/** The subject as a grouped transaction's exclusive key (src/db/group-commit.ts), before its entity id is known. */
export function subjectKey(organizationId: string, subject: Subject): string {
  return subject.kind === 'entity'
    ? entityKey(subject.id)
    : `subject:${JSON.stringify([organizationId, subject.issuer, subject.externalUserId])}`;
}

/** An entity as a grouped transaction's exclusive key: whatever its lock serializes (claims, standing) is its holder's. */
export const entityKey = (id: string) => `entity:${id}`;

export function lockSubject(deps: Deps, organizationId: string, subject: Subject, opts: { create: boolean }): Prisma.Sql[] {
  if (subject.kind === 'entity' && !isId('entity', subject.id)) throw missing('entity', subject.id, 'entity');
  const create = opts.create && subject.kind === 'external' ? [createEntity(deps, organizationId, subject)] : [];
  return [...create, lockSubjectStatement(organizationId, subject)];
}

export { lockEntity };
