import { handoffIssuers, type PublicHandoffIssuer } from '../../domain/connect/handoff-issuer.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { given } from '../connection.ts';
import { Node } from './node.ts';

/** Signed-handoff issuers of the selected brand. The algorithm keeps its JOSE spelling (HS256, EdDSA): a String. */
export const HandoffIssuer = builder.objectRef<PublicHandoffIssuer>('HandoffIssuer').implement({
  description: "A brand's signed-handoff issuer (iss_): the iss claim of the handoff tokens it signs",
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    brand: t.exposeString('brand'),
    name: t.exposeString('name'),
    algorithm: t.exposeString('algorithm', { description: 'HS256 or EdDSA (JOSE names)' }),
    publicKey: t.field({ type: 'JSON', nullable: true, description: 'EdDSA: the public key as a JWK', resolve: (i) => i.public_key }),
    secret: t.exposeString('secret', { nullable: true, description: 'HS256: only in the create and rotate answers' }),
    previousExpiresAt: t.exposeString('previous_expires_at', { nullable: true }),
    rotatedAt: t.exposeString('rotated_at', { nullable: true }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

const DeletedHandoffIssuer = builder.objectRef<{ id: string; deleted: boolean }>('DeletedHandoffIssuer').implement({
  description: 'What deleteHandoffIssuer answers',
  fields: (t) => ({ id: t.exposeID('id'), deleted: t.exposeBoolean('deleted') }),
});

connectionAction('handoffIssuers', handoffIssuers.list, {
  type: HandoffIssuer,
  description: "The brand's handoff issuers, newest first (scope handoff:read). Cursors are iss_ ids.",
  args: () => ({}),
  input: () => ({ input: {} }),
});

queryAction('handoffIssuer', handoffIssuers.retrieve, {
  description: 'One handoff issuer of the brand by iss_ id (scope handoff:read)',
  type: HandoffIssuer,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
});

mutationAction('createHandoffIssuer', handoffIssuers.create, {
  description: 'Register a handoff issuer: HS256 (secret generated when omitted, shown once) or EdDSA (publicKey) (scope handoff:write)',
  type: HandoffIssuer,
  args: (arg) => ({
    name: arg.string({ required: true }),
    algorithm: arg.string({ required: true }),
    secret: arg.string(),
    publicKey: arg({ type: 'JSON', description: 'An Ed25519 public key: a JWK object or an SPKI PEM string' }),
  }),
  input: (a) => ({
    input: given({ name: a.name, algorithm: a.algorithm, secret: a.secret ?? undefined, public_key: a.publicKey ?? undefined }),
  }),
});

mutationAction('rotateHandoffIssuer', handoffIssuers.rotate, {
  description: 'Install a new secret or public key; the previous one verifies for 24 h (scope handoff:write)',
  type: HandoffIssuer,
  args: (arg) => ({ id: arg.id({ required: true }), secret: arg.string(), publicKey: arg({ type: 'JSON' }) }),
  input: (a) => ({ params: { id: String(a.id) }, input: given({ secret: a.secret ?? undefined, public_key: a.publicKey ?? undefined }) }),
});

mutationAction('deleteHandoffIssuer', handoffIssuers.delete, {
  description: 'Delete a handoff issuer (scope handoff:write)',
  type: DeletedHandoffIssuer,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) }, input: {} }),
});
