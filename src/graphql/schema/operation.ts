import { DomainError, isDomainError } from '../../domain/errors.ts';
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

/** REST parameter names in GraphQL's words. */
const LIST_PARAMS: Record<string, string> = {
  limit: 'first',
  starting_after: 'after',
  subject_type: 'subjectType',
  subject_id: 'subjectId',
};

/**
 * Runs a REST-style list (limit / starting_after, newest first) for a
 * forward connection, naming parameters as GraphQL spells them in errors.
 */
export async function listAsConnection<T extends { id: string }>(
  a: { first?: number | null; after?: string | null; last?: number | null; before?: string | null },
  filters: Record<string, unknown>,
  list: (input: Record<string, unknown>) => Promise<{ data: T[]; has_more: boolean }>,
) {
  if (a.last != null || a.before != null)
    throw new DomainError('invalid_request', 'This list pages with first and after only', a.last != null ? 'last' : 'before');
  const input = Object.fromEntries(
    Object.entries({ ...filters, limit: a.first ?? undefined, starting_after: a.after ?? undefined }).filter(([, v]) => v != null),
  );
  let page;
  try {
    page = await list(input);
  } catch (e) {
    const param = isDomainError(e) && e.param ? LIST_PARAMS[e.param] : undefined;
    if (param) throw new DomainError((e as DomainError).code, (e as DomainError).message.replace((e as DomainError).param!, param), param);
    throw e;
  }
  return {
    edges: page.data.map((node) => ({ cursor: node.id, node })),
    pageInfo: {
      hasNextPage: page.has_more,
      hasPreviousPage: a.after != null,
      startCursor: page.data[0]?.id ?? null,
      endCursor: page.data.at(-1)?.id ?? null,
    },
  };
}

connectionAction('operations', operations.list, {
  type: Operation,
  description: 'Operations, newest first (operations:read, implicit). Cursors are op_ ids.',
  args: (arg) => ({
    subjectType: arg.string(),
    subjectId: arg.string({ description: 'A prefixed id or a bare uuid' }),
    status: arg({ type: OperationStatus }),
  }),
  input: (a) => ({
    input: { subject_type: a.subjectType ?? undefined, subject_id: a.subjectId ?? undefined, status: a.status ?? undefined },
  }),
  argNames: { subject_type: 'subjectType', subject_id: 'subjectId' },
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
