/** Client-side (camelCase) shapes of Surface B objects, as far as the spec states them. */
import type { EventDataMap, EventType } from '../event-data.ts';

export type { EventDataMap, EventType } from '../event-data.ts';

export interface Timestamped {
  livemode: boolean;
  createdAt: string;
}

export interface WebhookEndpoint extends Timestamped {
  id: string;
  object: 'webhook_endpoint';
  url: string;
  description: string | null;
  enabledEvents: string[];
  /** Besides `enabledEvents`: an event is delivered only if it matches every list given (null: not filtered). */
  filter: { brands: string[] | null; subjectTypes: string[] | null };
  status: 'enabled' | 'disabled';
  /** Why it is disabled: `manual` (through the API), `gone` (its receiver answered 410 Gone) or `failing` (every attempt failed for too long); null while enabled. */
  disabledReason: 'manual' | 'gone' | 'failing' | null;
  /** Since when every attempt has failed; null after a success. */
  failingSince: string | null;
  /** The endpoint's own delivery policy; a null field is the deployment's setting. */
  policy: WebhookEndpointPolicy;
  /** `subject`: deliveries of one subject go one at a time in seq order; `none`: in parallel, any order. */
  ordering: 'none' | 'subject';
  /** Retrieve only: success rate and latency over the last hour and day, last success and failure. */
  health?: WebhookEndpointHealth;
  /** Returned by create and rotateSecret only. */
  secret?: string;
  rotatedAt: string | null;
  updatedAt: string;
}

export interface WebhookEndpointPolicy {
  timeoutMs: number | null;
  /** Delays before each retry after the first attempt, e.g. `['30s', '5m']`. */
  retrySchedule: string[] | null;
  maxInFlight: number | null;
  rateLimitPerSecond: number | null;
}

export interface WebhookHealthWindow {
  attempts: number;
  succeeded: number;
  /** 0..1; null without attempts. */
  successRate: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface WebhookEndpointHealth {
  lastHour: WebhookHealthWindow;
  lastDay: WebhookHealthWindow;
  lastSuccessAt: string | null;
  lastFailure: { at: string; statusCode: number | null; error: string | null } | null;
}

export interface WebhookAttempt {
  /** 1 for the first attempt. */
  number: number;
  startedAt: string;
  durationMs: number;
  /** null when no response arrived. */
  statusCode: number | null;
  error: string | null;
  /** At most the first 1 KiB of the response body. */
  responseExcerpt: string | null;
}

export interface WebhookDelivery {
  id: string;
  object: 'webhook_delivery';
  endpointId: string;
  /** Also the `webhook-id` header of every attempt. */
  eventId: string;
  eventType: string | null;
  status: 'pending' | 'failing' | 'succeeded' | 'exhausted';
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  completedAt: string | null;
  /** The replay operation that re-sent the event (`op_`); null for a live delivery. */
  replayOperationId: string | null;
  attemptLog: WebhookAttempt[];
}

export interface DeletedObject {
  id: string;
  object: string;
  deleted: true;
}

export interface PlatformEvent<D = Record<string, any>> extends Timestamped {
  id: string;
  object: 'event';
  type: string;
  seq: number;
  subject: { type: string; id: string };
  /** The type-specific payload, camelCased like every other key. */
  data: D;
  operation: string | null;
  /** The brand the causing request selected; null for organization-level events. */
  brand: string | null;
}

/**
 * A public event whose `data` is typed by its `type` (a discriminated union: narrowing on `event.type` narrows
 * `event.data`), generated from the server's payload schemas (event-data.ts). Operator test events (`data.test`)
 * carry whatever data the operator gave.
 */
export type TypedEvent<T extends EventType = EventType> = {
  [K in T]: Omit<PlatformEvent<EventDataMap[K]>, 'type'> & { type: K };
}[T];

/** One entry of the event-type catalogue (`client.eventTypes`). */
export interface EventCatalogueEntry {
  object: 'event_type';
  type: EventType;
  description: string;
  /** JSON Schema (draft 2020-12) of the type's `data`, with keys camelCased as the client reads them. */
  schema: Record<string, unknown>;
  /** A `data` payload of this type. */
  example: Record<string, unknown>;
}

export interface AssertionEvent extends Timestamped {
  id: string;
  object: 'assertion';
  entity: string;
  key: string;
  action: 'asserted' | 'revoked';
  value: number | null;
  expiresAt: string | null;
  effectiveAt: string;
}

export type OperationStatus = 'pending' | 'running' | 'waiting' | 'succeeded' | 'partial' | 'failed' | 'canceled';

export const TERMINAL_OPERATION_STATUSES: readonly OperationStatus[] = ['succeeded', 'partial', 'failed', 'canceled'];

export interface Operation extends Timestamped {
  id: string;
  object: 'operation';
  subject: { type: string; id: string };
  kind: string;
  status: OperationStatus;
  waitingReason: string | null;
  attempts: number;
  maxAttempts: number;
  error: Record<string, any> | null;
  result: Record<string, any>;
  progress: Record<string, any>;
  targetOperationId: string | null;
  /** On a fan-out child: the operation that spawned it. */
  parentOperationId?: string | null;
  updatedAt?: string;
  completedAt: string | null;
}

export interface Distribution extends Timestamped {
  id: string;
  object: 'distribution';
  brand: string;
  name: string;
  /** e.g. `active`, `partially_active`, `paused`, `canceled`. */
  status: string;
  /** Minor units. */
  budget: number;
  budgetReserved: number;
  budgetSpent: number;
  updatedAt: string;
}

export interface Deployment extends Timestamped {
  id: string;
  object: 'deployment';
  distribution: string;
  provider: string;
  config: Record<string, any>;
  status: string;
  updatedAt: string;
}

/** What every distribution verb answers (202): the operation doing the work, and the distribution. */
export interface DistributionOperation {
  operation: Operation;
  distribution: Distribution;
}

export interface DistributionValidation {
  object: 'distribution_validation';
  valid: true;
  brand: string;
  budget: number;
  plannedSpend: number;
  deployments: number;
  walletBalance: number;
  fundingSufficient: boolean;
}

/** A claim's subject: an entity, or an external user id with its issuer (always together). */
export type AssertionSubject = { entity: string } | { externalUserId: string; issuer: string };

/** One measured value (`msr_`); `duplicate` when its `externalId` was already recorded (this is the first record). */
export interface Measurement {
  id: string;
  object: 'measurement';
  entity: string;
  metric: string;
  value: number;
  occurredAt: string;
  program: string | null;
  externalId: string | null;
  duplicate: boolean;
  createdAt: string;
}

export interface MeasurementBatch {
  object: 'measurement_batch';
  recorded: number;
  duplicates: number;
  /** One per measurement sent, in the same order. */
  data: Measurement[];
}

export type PerformanceWindow = 'day' | 'week' | 'month';

/** The exact sum of a metric over one UTC period (`periodEnd` exclusive). */
export interface PerformanceRollup {
  object: 'performance_rollup';
  metric: string;
  window: PerformanceWindow;
  periodStart: string;
  periodEnd: string;
  entity: string | null;
  program: string | null;
  value: number;
  count: number;
}

/** One rung of a program's tier ladder (`tier_`). */
export interface ProgramTier {
  id: string;
  object: 'program_tier';
  program: string;
  name: string;
  metric: string;
  threshold: number;
  rateBps: number;
  createdAt: string;
  updatedAt: string;
}

/** What a ladder change answers (202): the rung, and the `program.retier` operation applying the ladder. */
export interface ProgramTierChange<T = ProgramTier> {
  tier: T;
  operation: Operation;
}

export type LedgerEntryStatus = 'unpaid' | 'in_flight' | 'paid';

/** What an enrollment earned for a period, in integer minor units (`le_`); never updated or deleted. */
export interface LedgerEntry {
  id: string;
  object: 'ledger_entry';
  kind: 'accrual' | 'adjustment' | 'reversal';
  entity: string;
  program: string;
  enrollment: string;
  periodStart: string;
  periodEnd: string;
  sourcePeriodStart: string;
  tier: string | null;
  metric: string | null;
  value: number;
  rateBps: number;
  /** The exact amount earned, a decimal string in minor units. */
  earned: string;
  /** Integer minor units: earned plus the carried remainder, rounded down. */
  amount: number;
  carry: string;
  status: LedgerEntryStatus;
  payout: string | null;
  /** On a reversal: the entry it compensates. */
  reverses: string | null;
  /** On a reversal: why it was made. */
  reason: string | null;
  createdAt: string;
}

export type PayoutStatus = 'created' | 'in_review' | 'settled' | 'failed';

/** One payment to an entity from a payout run (`po_`). */
export interface Payout {
  id: string;
  object: 'payout';
  amount: number;
  entity: string;
  program: string | null;
  status: PayoutStatus;
  failureReason: string | null;
  periodEnd: string;
  /** The ledger entries (`le_`) it pays. */
  entries: string[];
  /** The `payout.run` operation. */
  operation: string;
  createdAt: string;
  updatedAt: string;
}

export interface Brand {
  id: string;
  object: 'brand';
  slug: string;
  name: string;
  /** The oldest brand: the one selected when no brand is given. */
  default: boolean;
  createdAt: string;
}

export interface Entity {
  id: string;
  object: 'entity';
  identities: { externalUserId: string; issuer: string }[];
  /** Keys of its current live claims. */
  claims: string[];
  /** In the selected brand's programs. */
  enrollments: { id: string; program: string; status: string; standing: string }[];
  /** With the selected brand. */
  relationships: { id: string; brand: string; status: RelationshipStatus }[];
  createdAt: string;
}

export type RelationshipStatus = 'created' | 'active' | 'paused' | 'ended';

export interface Relationship extends Timestamped {
  id: string;
  object: 'relationship';
  brand: string;
  entity: string;
  status: RelationshipStatus;
  endedAt: string | null;
  updatedAt: string;
}

export interface Connection extends Timestamped {
  id: string;
  object: 'connection';
  brand: string;
  entity: string;
  provider: string;
  accountId: string;
  grants: string[];
  status: 'active' | 'revoked';
  revokedAt: string | null;
  updatedAt: string;
}

export interface ConnectConfig {
  object: 'connect_config';
  brand: string;
  allowedOrigins: string[];
  defaultProgram: string | null;
  requiredAssertions: string[];
  displayName: string | null;
  primaryColor: string | null;
  accentColor: string | null;
  livemode: boolean;
  /** null until first configured. */
  updatedAt: string | null;
}

export interface HandoffIssuer extends Timestamped {
  id: string;
  object: 'handoff_issuer';
  brand: string;
  name: string;
  algorithm: 'HS256' | 'EdDSA';
  /** EdDSA: the public key as a JWK. */
  publicKey: Record<string, unknown> | null;
  /** HS256: in the create and rotate answers only. */
  secret?: string;
  previousExpiresAt: string | null;
  rotatedAt: string | null;
  updatedAt: string;
}
