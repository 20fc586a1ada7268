import { Connection as ConnectionShape, RevokedConnection, connections } from '../../domain/connection/connection.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { objectType } from '../derive.ts';
import { Node } from './node.ts';

/** Connections: an entity's accounts at providers and their grants, in the selected brand. */
export const ConnectedAccount = objectType('ConnectedAccount', ConnectionShape, {
  description: "A connection (conn_): an entity's account at a provider and what it granted, in the selected brand",
  interfaces: [Node],
});

const ConnectionRevocation = objectType('ConnectionRevocation', RevokedConnection, {
  description: 'A revoked connection and the deployment.teardown operations it started (one per live deployment placed through it)',
});

connectionAction('connections', connections.list, {
  type: ConnectedAccount,
  description: "The brand's connections, newest first (scope connections:read). Cursors are conn_ ids.",
});

queryAction('connection', connections.retrieve, {
  description: 'One connection of the brand by conn_ id (scope connections:read)',
  type: ConnectedAccount,
});

mutationAction('createConnection', connections.create, {
  description:
    "Record an entity's account at a provider and its grants; one active per brand, entity, provider and account (scope connections:write)",
  type: ConnectedAccount,
});

mutationAction('revokeConnection', connections.revoke, {
  description: 'Revoke a connection (final); live deployments placed through it start their teardown (scope connections:write)',
  type: ConnectionRevocation,
});
