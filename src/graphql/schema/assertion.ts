import {
  listAssertions,
  mutateAssertion,
  retrieveAssertion,
  type AssertionRevocation,
  type PublicAssertion,
} from '../../domain/assertion/assertion.ts';
import { builder } from '../builder.ts';
import { given, listConnection } from '../connection.ts';
import { graphqlIdempotencyKey } from '../idempotency.ts';
import { AssertionAction } from './enums.ts';
import { Node } from './node.ts';

/** Assertions in GraphQL: the REST routes' domain functions and idempotent runner, field for field. */
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

const AssertionRevocationRef = builder.objectRef<AssertionRevocation>('AssertionRevocation').implement({
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

builder.queryField('assertions', (t) =>
  t.connection({
    type: Assertion,
    description: "The subject's current claims, each as its newest event, ordered by key (scope assertions:read). Cursors are asrt_ ids.",
    authScopes: { scope: 'assertions:read' },
    args: { ...subjectArgs, key: t.arg.string(), includeExpired: t.arg.boolean() },
    resolve: (_r, a, ctx) =>
      listConnection(a, (paging) =>
        listAssertions(
          ctx.deps,
          ctx.caller.organization.id,
          given({ ...subjectInput(a), key: a.key, include_expired: a.includeExpired ?? undefined, ...paging }),
        ),
      ),
  }),
);

builder.queryField('assertion', (t) =>
  t.field({
    type: Assertion,
    description: 'One assertion event by asrt_ id (scope assertions:read)',
    authScopes: { scope: 'assertions:read' },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => retrieveAssertion(ctx.deps, ctx.caller.organization.id, String(a.id)),
  }),
);

const IDEMPOTENCY_KEY = { description: 'Overrides the Idempotency-Key header' };

builder.mutationField('createAssertion', (t) =>
  t.field({
    type: Assertion,
    description: 'State a claim; returns the new event, or the current one when nothing changed (scope assertions:write)',
    authScopes: { scope: 'assertions:write' },
    args: {
      ...subjectArgs,
      key: t.arg.string({ required: true }),
      value: t.arg({ type: 'JSON', description: 'boolean (stored as 1 or 0) or finite number; default true' }),
      expiresAt: t.arg.string({ description: 'RFC 3339, in the future' }),
      idempotencyKey: t.arg.string(IDEMPOTENCY_KEY),
    },
    resolve: async (_r, a, ctx, info) => {
      const input = given({ ...subjectInput(a), key: a.key, value: a.value ?? undefined, expires_at: a.expiresAt });
      const out = await mutateAssertion(ctx.deps, ctx.caller, { op: 'create', input }, graphqlIdempotencyKey(ctx, info, a.idempotencyKey));
      return out.body as PublicAssertion;
    },
  }),
);

builder.mutationField('revokeAssertion', (t) =>
  t.field({
    type: AssertionRevocationRef,
    description: 'Revoke a claim; revoked is false (and nothing appended) when it was already absent (scope assertions:write)',
    authScopes: { scope: 'assertions:write' },
    args: { ...subjectArgs, key: t.arg.string({ required: true }), idempotencyKey: t.arg.string(IDEMPOTENCY_KEY) },
    resolve: async (_r, a, ctx, info) => {
      const input = given({ ...subjectInput(a), key: a.key });
      const out = await mutateAssertion(ctx.deps, ctx.caller, { op: 'revoke', input }, graphqlIdempotencyKey(ctx, info, a.idempotencyKey));
      return out.body as AssertionRevocation;
    },
  }),
);
