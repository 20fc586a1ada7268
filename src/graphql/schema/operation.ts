import { operations, watchOperation, type PublicOperation } from '../../domain/operation/operation.ts';
import { connectionAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { EventSubject } from './event.ts';
import { OperationStatus, OperationWaitingReason } from './enums.ts';
import { Node } from './node.ts';

/** Operations in GraphQL: the same list and retrieve as REST, and a subscription to one operation's status changes. */
export const Operation = builder.objectRef<PublicOperation>('Operation').implement({
  description: 'A unit of background work (a launch, pause, resume, cancel or a fan-out child), polled or subscribed to until terminal',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    subject: t.field({ type: EventSubject, resolve: (o) => o.subject }),
    kind: t.exposeString('kind'),
    status: t.expose('status', { type: OperationStatus }),
    waitingReason: t.expose('waiting_reason', {
      type: OperationWaitingReason,
      nullable: true,
      description: 'Set exactly when status is WAITING',
    }),
    attempts: t.exposeInt('attempts'),
    maxAttempts: t.exposeInt('max_attempts'),
    error: t.field({ type: 'JSON', nullable: true, resolve: (o) => o.error }),
    result: t.field({ type: 'JSON', resolve: (o) => o.result }),
    progress: t.field({ type: 'JSON', resolve: (o) => o.progress }),
    targetOperationId: t.exposeString('target_operation_id', { nullable: true }),
    parentOperationId: t.exposeString('parent_operation_id', { nullable: true }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
    completedAt: t.exposeString('completed_at', { nullable: true }),
  }),
});

connectionAction('operations', operations.list, {
  type: Operation,
  description: 'Operations, newest first (operations:read, implicit). Cursors are op_ ids.',
  args: (arg) => ({
    subjectType: arg.string(),
    subjectId: arg.string({ description: 'A prefixed id or a bare uuid' }),
    status: arg({ type: OperationStatus }),
    parentOperationId: arg.string({ description: 'Only the fan-out children of this op_ operation' }),
    targetOperationId: arg.string({ description: 'Only the cancels targeting this op_ operation' }),
  }),
  input: (a) => ({
    input: {
      subject_type: a.subjectType ?? undefined,
      subject_id: a.subjectId ?? undefined,
      status: a.status ?? undefined,
      parent_operation_id: a.parentOperationId ?? undefined,
      target_operation_id: a.targetOperationId ?? undefined,
    },
  }),
  argNames: {
    subject_type: 'subjectType',
    subject_id: 'subjectId',
    parent_operation_id: 'parentOperationId',
    target_operation_id: 'targetOperationId',
  },
});

queryAction('operation', operations.retrieve, {
  description: 'One operation by op_ id (operations:read, implicit)',
  type: Operation,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
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
