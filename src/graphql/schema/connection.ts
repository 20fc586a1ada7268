import { connections, type PublicConnection, type PublicRevokedConnection } from '../../domain/connection/connection.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { given } from '../connection.ts';
import { subjectArgs, subjectInput } from './assertion.ts';
import { ConnectionStatus } from './enums.ts';
import { Node } from './node.ts';
import { Operation } from './operation.ts';

/** Connections: an entity's accounts at providers and their grants, in the selected brand. */
export const ConnectedAccount = builder.objectRef<PublicConnection>('ConnectedAccount').implement({
  description: "A connection (conn_): an entity's account at a provider and what it granted, in the selected brand",
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    brand: t.exposeString('brand'),
    entity: t.exposeString('entity'),
    provider: t.exposeString('provider'),
    accountId: t.exposeString('account_id'),
    grants: t.exposeStringList('grants'),
    status: t.field({ type: ConnectionStatus, resolve: (c) => c.status }),
    revokedAt: t.exposeString('revoked_at', { nullable: true }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

const ConnectionRevocation = builder.objectRef<PublicRevokedConnection>('ConnectionRevocation').implement({
  description: 'A revoked connection and the deployment.teardown operations it started (one per live deployment placed through it)',
  fields: (t) => ({
    connection: t.field({ type: ConnectedAccount, resolve: (r) => r.connection }),
    teardowns: t.field({ type: [Operation], resolve: (r) => r.teardowns }),
  }),
});

connectionAction('connections', connections.list, {
  type: ConnectedAccount,
  description: "The brand's connections, newest first (scope connections:read). Cursors are conn_ ids.",
  args: (arg) => ({ entity: arg.string(), provider: arg.string(), status: arg({ type: ConnectionStatus }) }),
  input: (a) => ({ input: given({ entity: a.entity ?? undefined, provider: a.provider ?? undefined, status: a.status ?? undefined }) }),
});

queryAction('connection', connections.retrieve, {
  description: 'One connection of the brand by conn_ id (scope connections:read)',
  type: ConnectedAccount,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
});

mutationAction('createConnection', connections.create, {
  description:
    "Record an entity's account at a provider and its grants; one active per brand, entity, provider and account (scope connections:write)",
  type: ConnectedAccount,
  args: (arg) => ({
    ...subjectArgs,
    provider: arg.string({ required: true }),
    accountId: arg.string({ required: true }),
    grants: arg.stringList(),
  }),
  input: (a) => ({
    input: given({ ...subjectInput(a), provider: a.provider, account_id: a.accountId, grants: a.grants ?? undefined }),
  }),
});

mutationAction('revokeConnection', connections.revoke, {
  description: 'Revoke a connection (final); live deployments placed through it start their teardown (scope connections:write)',
  type: ConnectionRevocation,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) }, input: {} }),
});
