import { Operation as OperationShape } from '../../domain/operation/presenter.ts';
import { operations, watchOperation } from '../../domain/operation/operation.ts';
import { connectionAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { objectType } from '../derive.ts';
import { OperationStatus } from './enums.ts';
import { Node } from './node.ts';

/** Operations in GraphQL: the same list and retrieve as REST, and a subscription to one operation's status changes. */
export const Operation = objectType('Operation', OperationShape, {
  description: 'A unit of background work (a launch, pause, resume, cancel or a fan-out child), polled or subscribed to until terminal',
  interfaces: [Node],
  json: ['error'],
});

connectionAction('operations', operations.list, {
  type: Operation,
  description: 'Operations, newest first (operations:read, implicit). Cursors are op_ ids.',
  // REST checks the status string itself (its error names the parameter); GraphQL types it.
  args: (arg) => ({ status: arg({ type: OperationStatus }) }),
});

queryAction('operation', operations.retrieve, {
  description: 'One operation by op_ id (operations:read, implicit)',
  type: Operation,
});

builder.subscriptionField('operation', (t) =>
  t.field({
    type: Operation,
    description:
      'The operation now, then every status change (and waiting reason change) until it is terminal; then the subscription completes.',
    authScopes: { scope: operations.retrieve.scope },
    args: { id: t.arg.id({ required: true }) },
    // The rule of which updates a subscriber receives is the domain's (watchOperation).
    subscribe: (_r, a, ctx) => watchOperation(ctx.deps, ctx.caller.organization.id, String(a.id)),
    resolve: (o) => o,
  }),
);
