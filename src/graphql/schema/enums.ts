import { ASSERTION_ACTIONS } from '../../domain/assertion/presenter.ts';
import { DEPLOYMENT_STATUSES, DISTRIBUTION_STATUSES } from '../../domain/distribution/states.ts';
import { PUBLIC_EVENT_TYPES } from '../../domain/event/types.ts';
import { ENROLLMENT_STATUSES, STANDINGS } from '../../domain/enrollment/presenter.ts';
import { OPERATION_STATUSES, WAITING_REASONS } from '../../domain/operation/operation.ts';
import { PERFORMANCE_WINDOWS, REQUIREMENT_OPERATORS } from '../../domain/program/program.ts';
import { UNIT_STATUSES } from '../../domain/unit/unit.ts';
import { DESTINATION_TYPES } from '../../domain/destination/transport.ts';
import { DELIVERY_STATUSES } from '../../domain/webhook/delivery.ts';
import { WEBHOOK_HEALTH_EVENT_KINDS } from '../../domain/webhook/health-event.ts';
import { WEBHOOK_ENDPOINT_DISABLED_REASONS, WEBHOOK_ENDPOINT_ORDERINGS, WEBHOOK_ENDPOINT_STATUSES } from '../../domain/webhook/endpoint.ts';
import { builder } from '../builder.ts';
import { enumFor } from '../derive.ts';
import { ENTRY_KINDS, ENTRY_STATUSES } from '../../domain/payout/ledger.ts';
import { PAYOUT_STATUSES } from '../../domain/payout/payout.ts';
import { RELATIONSHIP_STATUSES } from '../../domain/relationship/states.ts';
import { CONNECTION_STATUSES } from '../../domain/connection/connection.ts';

/**
 * Every closed set of the domain as a GraphQL enum, declared from the same
 * `as const` array that REST validates with (rest/platform/*schemas.ts). The
 * names are SCREAMING_CASE (`PARTIALLY_ACTIVE`); the values inside are the
 * domain's wire values (`partially_active`), so resolvers return and
 * filters receive exactly what the domain speaks and REST keeps its
 * lower-case spellings. Event types stay strings: a dotted name cannot be
 * an enum value. Each is the GraphQL type of every zod enum of the same
 * values (src/graphql/derive.ts).
 */
function closedSet<const V extends string>(
  name: string,
  values: readonly V[],
  description: string,
  about: Partial<Record<V, string>> = {},
) {
  const config = Object.fromEntries(values.map((v) => [v.toUpperCase(), about[v] ? { value: v, description: about[v] } : { value: v }]));
  const ref = builder.enumType(name, { description, values: config as { [K in V as Uppercase<K>]: { value: K; description?: string } } });
  enumFor(values, ref);
  return ref;
}

export const OperationStatus = closedSet(
  'OperationStatus',
  OPERATION_STATUSES,
  'Where an operation is: alive (PENDING, RUNNING, WAITING) or terminal (the others, with completedAt set)',
  {
    pending: 'Queued, waiting for a worker',
    running: 'A worker holds its lease and is running it',
    waiting: 'Parked until something happens; waitingReason says what',
    succeeded: 'Done',
    partial: 'Done in part; error says what failed',
    failed: 'Gave up; error says why',
    canceled: 'Stopped by a cancel (or made moot by one)',
  },
);

export const OperationWaitingReason = closedSet('OperationWaitingReason', WAITING_REASONS, 'Why a WAITING operation waits', {
  funding_required: 'The brand wallet cannot cover the budget; a top-up wakes it',
  provider_review: 'The provider is reviewing a deployment, or holds payouts of a payout run for review',
  awaiting_target_settle: 'A cancel waits for the operation it supersedes to stop',
  awaiting_children_settle: 'Waits for its fan-out children to settle',
  awaiting_cleanup: 'A provider is still tearing placements down',
  awaiting_deliveries: 'A webhook replay has queued every event; its deliveries are still being attempted',
});

export const DistributionStatus = closedSet(
  'DistributionStatus',
  DISTRIBUTION_STATUSES,
  "A distribution's lifecycle (LAUNCHING first; a FAILED one may be launched again)",
);
export const DeploymentStatus = closedSet('DeploymentStatus', DEPLOYMENT_STATUSES, "A deployment's lifecycle at its provider");
export const PerformanceWindow = closedSet(
  'PerformanceWindow',
  PERFORMANCE_WINDOWS,
  'A UTC period of measurements: DAY, WEEK (ISO 8601: from Monday) or MONTH',
);
export const AssertionAction = closedSet('AssertionAction', ASSERTION_ACTIONS, 'Whether an assertion event states or revokes its claim');
export const UnitStatus = closedSet('UnitStatus', UNIT_STATUSES, 'A unit is a DRAFT until published');
export const WebhookEndpointStatus = closedSet(
  'WebhookEndpointStatus',
  WEBHOOK_ENDPOINT_STATUSES,
  'A DISABLED endpoint receives no deliveries',
);
export const WebhookEndpointDisabledReason = closedSet(
  'WebhookEndpointDisabledReason',
  WEBHOOK_ENDPOINT_DISABLED_REASONS,
  'Why an endpoint is disabled: MANUAL (through the API), GONE (its receiver answered 410 Gone) or FAILING (every attempt failed for too long)',
);
export const WebhookEndpointOrdering = closedSet(
  'WebhookEndpointOrdering',
  WEBHOOK_ENDPOINT_ORDERINGS,
  'NONE: deliveries go out in parallel, in any order (the default); SUBJECT: deliveries of one subject go one at a time in seq order, a failing one holding back the later ones of its subject only',
);
export const EventDestinationType = closedSet(
  'EventDestinationType',
  DESTINATION_TYPES,
  "An event destination's broker: RABBITMQ (AMQP 0-9-1), NATS (JetStream) or REDIS (Redis Streams)",
);
export const WebhookEndpointHealthEventKind = closedSet(
  'WebhookEndpointHealthEventKind',
  WEBHOOK_HEALTH_EVENT_KINDS,
  'FAILING_STARTED: an unbroken run of failed attempts began; RECOVERED: a 2xx ended it; DISABLED (see reason); ENABLED',
);
export const WebhookDeliveryStatus = closedSet(
  'WebhookDeliveryStatus',
  DELIVERY_STATUSES,
  "A delivery's state: PENDING and FAILING are retried, SUCCEEDED and EXHAUSTED are final",
);
export const EnrollmentStatus = closedSet(
  'EnrollmentStatus',
  ENROLLMENT_STATUSES,
  "An enrollment's lifecycle: PENDING, APPROVED, then ACTIVE (or REJECTED); PAUSED once the entity's relationship with the brand ended",
);
export const EnrollmentStanding = closedSet(
  'EnrollmentStanding',
  STANDINGS,
  "Whether an ACTIVE enrollment meets its program's requirements (GRACE: it stopped meeting them and the grace period runs)",
);
export const RequirementOperator = closedSet(
  'RequirementOperator',
  REQUIREMENT_OPERATORS,
  'How a requirement compares the claim value with its threshold (EXISTS: the claim is present, no threshold)',
);

/** Event types keep their dotted wire names (a GraphQL enum value cannot hold a dot): strings checked against the vocabulary, which the description lists. */
export const EVENT_TYPE_DOC = `A public event type (dotted, so a String rather than an enum; anything else is invalid_event_type): ${PUBLIC_EVENT_TYPES.join(', ')}`;
export const RelationshipStatus = closedSet(
  'RelationshipStatus',
  RELATIONSHIP_STATUSES,
  "A relationship's lifecycle: CREATED, then ACTIVE and PAUSED in turn, ENDED (final; a new relationship may follow)",
);
export const LedgerEntryKind = closedSet(
  'LedgerEntryKind',
  ENTRY_KINDS,
  'ACCRUAL (a closed period), ADJUSTMENT (a later change to it), REVERSAL',
);
export const LedgerEntryStatus = closedSet(
  'LedgerEntryStatus',
  ENTRY_STATUSES,
  'UNPAID, IN_FLIGHT (a created payout, or one in review, holds it) or PAID (a settled one)',
);
export const PayoutStatus = closedSet(
  'PayoutStatus',
  PAYOUT_STATUSES,
  'CREATED, then SETTLED or FAILED; IN_REVIEW between when the provider holds it for review (still in flight)',
);
export const ConnectionStatus = closedSet(
  'ConnectionStatus',
  CONNECTION_STATUSES,
  "A connection's lifecycle: ACTIVE, then REVOKED (final; the account may be connected again)",
);
