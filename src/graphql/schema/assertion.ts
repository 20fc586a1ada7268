import { assertions, type PublicAssertionRevocation } from '../../domain/assertion/assertion.ts';
import type { PublicAssertion } from '../../domain/assertion/presenter.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { given } from '../connection.ts';
import { AssertionAction } from './enums.ts';
import { Node } from './node.ts';

/** Assertions in GraphQL: the same actions as REST, so a key replays identically on both. */
export const Assertion = builder.objectRef<PublicAssertion>('Assertion').implement({
  description: 'One assertion event (asrt_); a claim is the newest event for (entity, key)',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    entity: t.exposeString('entity'),
    key: t.exposeString('key'),
    action: t.expose('action', { type: AssertionAction }),
    value: t.exposeFloat('value', { nullable: true }),
    expiresAt: t.exposeString('expires_at', { nullable: true }),
    effectiveAt: t.exposeString('effective_at'),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
  }),
});

const AssertionRevocationRef = builder.objectRef<PublicAssertionRevocation>('AssertionRevocation').implement({
  description: 'What revokeAssertion answers',
  fields: (t) => ({
    entity: t.exposeString('entity', { nullable: true }),
    key: t.exposeString('key'),
    revoked: t.exposeBoolean('revoked', { description: 'false when the claim was already absent (nothing appended)' }),
    assertion: t.field({ type: Assertion, nullable: true, resolve: (r) => r.assertion }),
  }),
});

/** The subject of a claim or enrollment: `entity`, or `externalUserId` with `issuer`. */
export const subjectArgs = builder.args((t) => ({
  entity: t.string({ description: 'ent_ id; or externalUserId with issuer' }),
  externalUserId: t.string(),
  issuer: t.string(),
}));
export const subjectInput = (a: { entity?: string | null; externalUserId?: string | null; issuer?: string | null }) => ({
  entity: a.entity,
  external_user_id: a.externalUserId,
  issuer: a.issuer,
});

connectionAction('assertions', assertions.list, {
  type: Assertion,
  description: "The subject's current claims, each as its newest event, ordered by key (scope assertions:read). Cursors are asrt_ ids.",
  args: (arg) => ({ ...subjectArgs, key: arg.string(), includeExpired: arg.boolean() }),
  input: (a) => ({ input: given({ ...subjectInput(a), key: a.key, include_expired: a.includeExpired ?? undefined }) }),
});

queryAction('assertion', assertions.retrieve, {
  type: Assertion,
  description: 'One assertion event by asrt_ id (scope assertions:read)',
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
});

mutationAction('createAssertion', assertions.create, {
  type: Assertion,
  description: 'State a claim; returns the new event, or the current one when nothing changed (scope assertions:write)',
  args: (arg) => ({
    ...subjectArgs,
    key: arg.string({ required: true }),
    value: arg({ type: 'JSON', description: 'boolean (stored as 1 or 0) or finite number; default true' }),
    expiresAt: arg.string({ description: 'RFC 3339, in the future' }),
  }),
  input: (a) => ({ input: given({ ...subjectInput(a), key: a.key, value: a.value ?? undefined, expires_at: a.expiresAt }) }),
});

mutationAction('revokeAssertion', assertions.revoke, {
  type: AssertionRevocationRef,
  description: 'Revoke a claim; revoked is false (and nothing appended) when it was already absent (scope assertions:write)',
  args: (arg) => ({ ...subjectArgs, key: arg.string({ required: true }) }),
  input: (a) => ({ input: given({ ...subjectInput(a), key: a.key }) }),
});
