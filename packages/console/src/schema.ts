// Generated from schema.graphql by scripts/console-types.ts (npm run schema:print): do not edit.
/** DateTime: an RFC 3339 string on the wire. */
export type DateTime = string;
/** Any JSON value. */
export type JSON = unknown;
export interface Assertion {
  action: AssertionAction;
  createdAt: DateTime;
  effectiveAt: DateTime;
  entity: string;
  expiresAt: DateTime | null;
  id: string;
  key: string;
  livemode: boolean;
  value: number | null;
}
export type AssertionAction = 'ASSERTED' | 'REVOKED';
export interface AssertionRevocation {
  assertion: Assertion | null;
  entity: string | null;
  key: string;
  revoked: boolean;
}
export interface Brand {
  createdAt: DateTime;
  default: boolean;
  id: string;
  name: string;
  organization: string;
  slug: string;
}
export interface ConnectConfig {
  accentColor: string | null;
  allowedOrigins: Array<string>;
  brand: string;
  defaultProgram: string | null;
  displayName: string | null;
  livemode: boolean;
  primaryColor: string | null;
  requiredAssertions: Array<string>;
  updatedAt: DateTime | null;
}
export interface ConnectedAccount {
  accountId: string;
  brand: string;
  createdAt: DateTime;
  entity: string;
  grants: Array<string>;
  id: string;
  livemode: boolean;
  provider: string;
  revokedAt: DateTime | null;
  status: ConnectionStatus;
  updatedAt: DateTime;
}
export interface ConnectionRevocation {
  connection: ConnectedAccount;
  teardowns: Array<Operation>;
}
export type ConnectionStatus = 'ACTIVE' | 'REVOKED';
export interface CreateUnitPayload {
  duplicate: boolean;
  unit: Unit;
}
export interface DeletedEventDestination {
  deleted: boolean;
  id: string;
}
export interface DeletedHandoffIssuer {
  deleted: boolean;
  id: string;
}
export interface DeletedProgramRequirement {
  deleted: boolean;
  id: string;
}
export interface DeletedProgramTier {
  deleted: boolean;
  id: string;
}
export interface DeletedProgramTierChange {
  operation: Operation;
  tier: DeletedProgramTier;
}
export interface DeletedWebhookEndpoint {
  deleted: boolean;
  id: string;
}
export interface Deployment {
  config: JSON;
  connection: string | null;
  createdAt: DateTime;
  distribution: string;
  id: string;
  livemode: boolean;
  provider: string;
  status: DeploymentStatus;
  updatedAt: DateTime;
}
export interface DeploymentInput {
  config: JSON | null;
  connection: string | null;
  provider: string;
}
export type DeploymentStatus = 'ACTIVE' | 'CANCELED' | 'CANCELING' | 'CLEANUP_FAILED' | 'COMPLETED' | 'FAILED' | 'IN_REVIEW' | 'PAUSED' | 'PENDING' | 'PROVISIONING' | 'REJECTED';
export interface Distribution {
  brand: string;
  budget: number;
  budgetReserved: number;
  budgetSpent: number;
  createdAt: DateTime;
  id: string;
  livemode: boolean;
  name: string;
  status: DistributionStatus;
  updatedAt: DateTime;
}
export interface DistributionOperation {
  distribution: Distribution;
  operation: Operation;
}
export type DistributionStatus = 'ACTIVE' | 'CANCELED' | 'COMPLETED' | 'FAILED' | 'LAUNCHING' | 'PARTIALLY_ACTIVE' | 'PAUSED';
export interface DistributionValidation {
  brand: string;
  budget: number;
  deployments: number;
  fundingSufficient: boolean;
  plannedSpend: number;
  valid: boolean;
  walletBalance: number;
}
export interface Enrollment {
  createdAt: DateTime;
  entity: string;
  evaluatedAt: DateTime | null;
  evaluation: JSON | null;
  graceEndsAt: DateTime | null;
  id: string;
  livemode: boolean;
  program: string;
  standing: EnrollmentStanding;
  status: EnrollmentStatus;
  tier: EnrollmentTier | null;
  updatedAt: DateTime;
}
export type EnrollmentStanding = 'GRACE' | 'NOT_QUALIFIED' | 'QUALIFIED';
export type EnrollmentStatus = 'ACTIVE' | 'APPROVED' | 'PAUSED' | 'PENDING' | 'REJECTED';
export interface EnrollmentTier {
  id: string;
  metric: string;
  name: string;
  rateBps: number;
  threshold: number;
  value: number;
}
export interface Entity {
  claims: Array<string>;
  createdAt: DateTime;
  enrollments: Array<EntityEnrollment>;
  id: string;
  identities: Array<EntityIdentity>;
  relationships: Array<EntityRelationship>;
}
export interface EntityEnrollment {
  id: string;
  program: string;
  standing: EnrollmentStanding;
  status: EnrollmentStatus;
}
export interface EntityIdentity {
  externalUserId: string;
  issuer: string;
}
export interface EntityRelationship {
  brand: string;
  id: string;
  status: RelationshipStatus;
}
export interface Event {
  brand: string | null;
  createdAt: DateTime;
  data: JSON;
  id: string;
  livemode: boolean;
  operation: string | null;
  seq: number;
  subject: EventSubject;
  type: string;
}
export interface EventCatalogueEntry {
  description: string;
  example: JSON;
  schema: JSON;
  type: string;
}
export interface EventDestination {
  caCertificate: string | null;
  createdAt: DateTime;
  deliveries: EventDestinationDeliveriesConnection;
  description: string | null;
  disabledReason: WebhookEndpointDisabledReason | null;
  enabledEvents: Array<string>;
  exchange: string | null;
  failingSince: DateTime | null;
  filter: WebhookEndpointFilter;
  health: WebhookEndpointHealth;
  id: string;
  livemode: boolean;
  maxLen: number | null;
  ordering: WebhookEndpointOrdering;
  policy: WebhookEndpointPolicy;
  rotatedAt: DateTime | null;
  routingKey: string | null;
  secret: string | null;
  status: WebhookEndpointStatus;
  stream: string | null;
  subject: string | null;
  type: EventDestinationType;
  updatedAt: DateTime;
  url: string;
}
export interface EventDestinationDeliveriesConnection {
  edges: Array<EventDestinationDeliveriesConnectionEdge>;
  pageInfo: PageInfo;
}
export interface EventDestinationDeliveriesConnectionEdge {
  cursor: string;
  node: WebhookDelivery;
}
export type EventDestinationType = 'NATS' | 'RABBITMQ' | 'REDIS';
export interface EventSubject {
  id: string;
  type: string;
}
export interface HandoffIssuer {
  algorithm: string;
  brand: string;
  createdAt: DateTime;
  id: string;
  livemode: boolean;
  name: string;
  previousExpiresAt: DateTime | null;
  publicKey: JSON | null;
  rotatedAt: DateTime | null;
  secret: string | null;
  updatedAt: DateTime;
}
export interface LedgerEntry {
  amount: number;
  carry: string;
  createdAt: DateTime;
  earned: string;
  enrollment: string;
  entity: string;
  id: string;
  kind: LedgerEntryKind;
  metric: string | null;
  payout: string | null;
  periodEnd: DateTime;
  periodStart: DateTime;
  program: string;
  rateBps: number;
  reason: string | null;
  reverses: string | null;
  sourcePeriodStart: DateTime;
  status: LedgerEntryStatus;
  tier: string | null;
  value: number;
}
export type LedgerEntryKind = 'ACCRUAL' | 'ADJUSTMENT' | 'REVERSAL';
export type LedgerEntryStatus = 'IN_FLIGHT' | 'PAID' | 'UNPAID';
export interface Measurement {
  createdAt: DateTime;
  duplicate: boolean;
  entity: string;
  externalId: string | null;
  id: string;
  metric: string;
  occurredAt: DateTime;
  program: string | null;
  value: number;
}
export interface MeasurementBatch {
  data: Array<Measurement>;
  duplicates: number;
  recorded: number;
}
export interface MeasurementInput {
  entity: string | null;
  externalId: string | null;
  externalUserId: string | null;
  issuer: string | null;
  metric: string;
  occurredAt: string;
  program: string | null;
  value: number;
}
export interface Mutation {
  activateEnrollment: Enrollment;
  activateRelationship: Relationship;
  approveEnrollment: Enrollment;
  cancelDistribution: DistributionOperation;
  cancelEventDestinationReplay: Operation;
  cancelPayoutRun: Operation;
  cancelWebhookEndpointReplay: Operation;
  createAssertion: Assertion;
  createConnection: ConnectedAccount;
  createDistribution: DistributionOperation;
  createEnrollment: Enrollment;
  createEventDestination: EventDestination;
  createHandoffIssuer: HandoffIssuer;
  createProgram: Program;
  createProgramRequirement: ProgramRequirement;
  createProgramTier: ProgramTierChange;
  createRelationship: Relationship;
  createUnit: CreateUnitPayload;
  createWebhookEndpoint: WebhookEndpoint;
  deleteEventDestination: DeletedEventDestination;
  deleteHandoffIssuer: DeletedHandoffIssuer;
  deleteProgramRequirement: DeletedProgramRequirement;
  deleteProgramTier: DeletedProgramTierChange;
  deleteUnit: boolean;
  deleteWebhookEndpoint: DeletedWebhookEndpoint;
  endRelationship: Relationship;
  launchDistribution: DistributionOperation;
  pauseDistribution: DistributionOperation;
  pauseRelationship: Relationship;
  publishUnit: Unit;
  recordMeasurements: MeasurementBatch;
  rejectEnrollment: Enrollment;
  replayEventDestination: Operation;
  replayWebhookEndpoint: Operation;
  resumeDistribution: DistributionOperation;
  resumeEnrollment: Enrollment;
  resumeRelationship: Relationship;
  retryEventDestinationDelivery: WebhookDelivery;
  retryWebhookDelivery: WebhookDelivery;
  reverseLedgerEntry: LedgerEntry;
  revokeAssertion: AssertionRevocation;
  revokeConnection: ConnectionRevocation;
  rotateEventDestinationSecret: EventDestination;
  rotateHandoffIssuer: HandoffIssuer;
  rotateWebhookEndpointSecret: WebhookEndpoint;
  runPayouts: Operation;
  updateConnectConfig: ConnectConfig;
  updateEventDestination: EventDestination;
  updateProgramTier: ProgramTierChange;
  updateWebhookEndpoint: WebhookEndpoint;
  validateDistribution: DistributionValidation;
}
export interface Node {
  id: string;
}
export interface Operation {
  attempts: number;
  completedAt: DateTime | null;
  createdAt: DateTime;
  error: JSON | null;
  id: string;
  kind: string;
  livemode: boolean;
  maxAttempts: number;
  parentOperationId: string | null;
  progress: JSON;
  result: JSON;
  status: OperationStatus;
  subject: EventSubject;
  targetOperationId: string | null;
  updatedAt: DateTime;
  waitingReason: OperationWaitingReason | null;
}
export type OperationStatus = 'CANCELED' | 'FAILED' | 'PARTIAL' | 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'WAITING';
export type OperationWaitingReason = 'AWAITING_CHILDREN_SETTLE' | 'AWAITING_CLEANUP' | 'AWAITING_DELIVERIES' | 'AWAITING_TARGET_SETTLE' | 'FUNDING_REQUIRED' | 'PROVIDER_REVIEW';
export interface Organization {
  createdAt: DateTime;
  id: string;
  name: string;
  slug: string;
}
export interface PageInfo {
  endCursor: string | null;
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
}
export interface Payout {
  amount: number;
  createdAt: DateTime;
  entity: string;
  entries: Array<string>;
  failureReason: string | null;
  id: string;
  operation: string;
  periodEnd: DateTime;
  program: string | null;
  status: PayoutStatus;
  updatedAt: DateTime;
}
export type PayoutStatus = 'CREATED' | 'FAILED' | 'IN_REVIEW' | 'SETTLED';
export interface PerformanceRollup {
  count: number;
  entity: string | null;
  metric: string;
  periodEnd: DateTime;
  periodStart: DateTime;
  program: string | null;
  value: number;
  window: PerformanceWindow;
}
export interface PerformanceRollupList {
  data: Array<PerformanceRollup>;
  hasMore: boolean;
}
export type PerformanceWindow = 'DAY' | 'MONTH' | 'WEEK';
export interface Program {
  brand: string;
  createdAt: DateTime;
  gracePeriodSeconds: number;
  id: string;
  livemode: boolean;
  name: string;
  performanceWindow: PerformanceWindow;
  requirements: Array<ProgramRequirement>;
  updatedAt: DateTime;
}
export interface ProgramRequirement {
  createdAt: DateTime;
  id: string;
  metric: string;
  operator: RequirementOperator;
  program: string;
  threshold: number | null;
}
export interface ProgramTier {
  createdAt: DateTime;
  id: string;
  metric: string;
  name: string;
  program: string;
  rateBps: number;
  threshold: number;
  updatedAt: DateTime;
}
export interface ProgramTierChange {
  operation: Operation;
  tier: ProgramTier;
}
export interface Query {
  assertion: Assertion;
  assertions: QueryAssertionsConnection;
  brand: Brand;
  brands: QueryBrandsConnection;
  connectConfig: ConnectConfig;
  connection: ConnectedAccount;
  connections: QueryConnectionsConnection;
  deployment: Deployment;
  deployments: QueryDeploymentsConnection;
  distribution: Distribution;
  distributions: QueryDistributionsConnection;
  enrollment: Enrollment;
  enrollments: QueryEnrollmentsConnection;
  entities: QueryEntitiesConnection;
  entity: Entity;
  event: Event;
  eventDeliveries: QueryEventDeliveriesConnection;
  eventDestination: EventDestination;
  eventDestinations: QueryEventDestinationsConnection;
  eventType: EventCatalogueEntry;
  eventTypes: Array<EventCatalogueEntry>;
  events: QueryEventsConnection;
  handoffIssuer: HandoffIssuer;
  handoffIssuers: QueryHandoffIssuersConnection;
  ledgerEntries: QueryLedgerEntriesConnection;
  node: Node | null;
  operation: Operation;
  operations: QueryOperationsConnection;
  payout: Payout;
  payouts: QueryPayoutsConnection;
  performanceRollups: PerformanceRollupList;
  program: Program;
  programRequirements: Array<ProgramRequirement>;
  programTiers: Array<ProgramTier>;
  programs: QueryProgramsConnection;
  relationship: Relationship;
  relationships: QueryRelationshipsConnection;
  units: UnitPage;
  viewer: Viewer;
  webhookEndpoint: WebhookEndpoint;
  webhookEndpoints: QueryWebhookEndpointsConnection;
}
export interface QueryAssertionsConnection {
  edges: Array<QueryAssertionsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryAssertionsConnectionEdge {
  cursor: string;
  node: Assertion;
}
export interface QueryBrandsConnection {
  edges: Array<QueryBrandsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryBrandsConnectionEdge {
  cursor: string;
  node: Brand;
}
export interface QueryConnectionsConnection {
  edges: Array<QueryConnectionsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryConnectionsConnectionEdge {
  cursor: string;
  node: ConnectedAccount;
}
export interface QueryDeploymentsConnection {
  edges: Array<QueryDeploymentsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryDeploymentsConnectionEdge {
  cursor: string;
  node: Deployment;
}
export interface QueryDistributionsConnection {
  edges: Array<QueryDistributionsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryDistributionsConnectionEdge {
  cursor: string;
  node: Distribution;
}
export interface QueryEnrollmentsConnection {
  edges: Array<QueryEnrollmentsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryEnrollmentsConnectionEdge {
  cursor: string;
  node: Enrollment;
}
export interface QueryEntitiesConnection {
  edges: Array<QueryEntitiesConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryEntitiesConnectionEdge {
  cursor: string;
  node: Entity;
}
export interface QueryEventDeliveriesConnection {
  edges: Array<QueryEventDeliveriesConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryEventDeliveriesConnectionEdge {
  cursor: string;
  node: WebhookDelivery;
}
export interface QueryEventDestinationsConnection {
  edges: Array<QueryEventDestinationsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryEventDestinationsConnectionEdge {
  cursor: string;
  node: EventDestination;
}
export interface QueryEventsConnection {
  edges: Array<QueryEventsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryEventsConnectionEdge {
  cursor: string;
  node: Event;
}
export interface QueryHandoffIssuersConnection {
  edges: Array<QueryHandoffIssuersConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryHandoffIssuersConnectionEdge {
  cursor: string;
  node: HandoffIssuer;
}
export interface QueryLedgerEntriesConnection {
  edges: Array<QueryLedgerEntriesConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryLedgerEntriesConnectionEdge {
  cursor: string;
  node: LedgerEntry;
}
export interface QueryOperationsConnection {
  edges: Array<QueryOperationsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryOperationsConnectionEdge {
  cursor: string;
  node: Operation;
}
export interface QueryPayoutsConnection {
  edges: Array<QueryPayoutsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryPayoutsConnectionEdge {
  cursor: string;
  node: Payout;
}
export interface QueryProgramsConnection {
  edges: Array<QueryProgramsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryProgramsConnectionEdge {
  cursor: string;
  node: Program;
}
export interface QueryRelationshipsConnection {
  edges: Array<QueryRelationshipsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryRelationshipsConnectionEdge {
  cursor: string;
  node: Relationship;
}
export interface QueryWebhookEndpointsConnection {
  edges: Array<QueryWebhookEndpointsConnectionEdge>;
  pageInfo: PageInfo;
}
export interface QueryWebhookEndpointsConnectionEdge {
  cursor: string;
  node: WebhookEndpoint;
}
export interface Relationship {
  brand: string;
  createdAt: DateTime;
  endedAt: DateTime | null;
  entity: string;
  id: string;
  livemode: boolean;
  status: RelationshipStatus;
  updatedAt: DateTime;
}
export type RelationshipStatus = 'ACTIVE' | 'CREATED' | 'ENDED' | 'PAUSED';
export type RequirementOperator = 'EQ' | 'EXISTS' | 'GTE' | 'LTE' | 'NEQ';
export interface Subscription {
  events: Event;
  operation: Operation;
  webhookEndpointHealthChanged: WebhookEndpointHealthEvent;
}
export interface Unit {
  caption: string;
  createdAt: DateTime;
  id: string;
  livemode: boolean;
  productionId: string | null;
  publishedAt: DateTime | null;
  status: UnitStatus;
  type: string;
  updatedAt: DateTime;
}
export interface UnitPage {
  hasMore: boolean;
  page: number;
  perPage: number;
  units: Array<Unit>;
}
export type UnitStatus = 'DRAFT' | 'PUBLISHED';
export interface Viewer {
  brand: Brand;
  brands: Array<Brand>;
  organization: Organization;
  scopes: Array<string>;
  tokenId: string;
}
export interface WebhookAttempt {
  durationMs: number;
  error: string | null;
  number: number;
  responseExcerpt: string | null;
  startedAt: DateTime;
  statusCode: number | null;
}
export interface WebhookAttemptFailure {
  at: DateTime;
  error: string | null;
  statusCode: number | null;
}
export interface WebhookDelivery {
  attemptLog: Array<WebhookAttempt>;
  attempts: number;
  completedAt: DateTime | null;
  createdAt: DateTime;
  endpointId: string;
  eventId: string;
  eventType: string | null;
  id: string;
  lastError: string | null;
  lastStatusCode: number | null;
  nextAttemptAt: DateTime | null;
  replayOperationId: string | null;
  status: WebhookDeliveryStatus;
}
export type WebhookDeliveryStatus = 'EXHAUSTED' | 'FAILING' | 'PENDING' | 'SUCCEEDED';
export interface WebhookDeliveryStatusSummary {
  exhausted: number;
  failing: number;
  pending: number;
  succeeded: number;
}
export interface WebhookEndpoint {
  createdAt: DateTime;
  deliveries: WebhookEndpointDeliveriesConnection;
  description: string | null;
  disabledReason: WebhookEndpointDisabledReason | null;
  enabledEvents: Array<string>;
  failingSince: DateTime | null;
  filter: WebhookEndpointFilter;
  health: WebhookEndpointHealth;
  id: string;
  livemode: boolean;
  ordering: WebhookEndpointOrdering;
  policy: WebhookEndpointPolicy;
  rotatedAt: DateTime | null;
  secret: string | null;
  status: WebhookEndpointStatus;
  updatedAt: DateTime;
  url: string;
  webhookDelivery: WebhookDeliveryStatusSummary;
}
export interface WebhookEndpointDeliveriesConnection {
  edges: Array<WebhookEndpointDeliveriesConnectionEdge>;
  pageInfo: PageInfo;
}
export interface WebhookEndpointDeliveriesConnectionEdge {
  cursor: string;
  node: WebhookDelivery;
}
export type WebhookEndpointDisabledReason = 'FAILING' | 'GONE' | 'MANUAL';
export interface WebhookEndpointFilter {
  brands: Array<string> | null;
  subjectTypes: Array<string> | null;
}
export interface WebhookEndpointFilterInput {
  brands: Array<string> | null;
  subjectTypes: Array<string> | null;
}
export interface WebhookEndpointHealth {
  lastDay: WebhookHealthWindow;
  lastFailure: WebhookAttemptFailure | null;
  lastHour: WebhookHealthWindow;
  lastSuccessAt: DateTime | null;
}
export interface WebhookEndpointHealthEvent {
  createdAt: DateTime;
  endpoint: WebhookEndpoint;
  id: string;
  kind: WebhookEndpointHealthEventKind;
  reason: string | null;
}
export type WebhookEndpointHealthEventKind = 'DISABLED' | 'ENABLED' | 'FAILING_STARTED' | 'RECOVERED';
export type WebhookEndpointOrdering = 'NONE' | 'SUBJECT';
export interface WebhookEndpointPolicy {
  maxInFlight: number | null;
  rateLimitPerSecond: number | null;
  retrySchedule: Array<string> | null;
  timeoutMs: number | null;
}
export interface WebhookEndpointPolicyInput {
  maxInFlight: number | null;
  rateLimitPerSecond: number | null;
  retrySchedule: Array<string> | null;
  timeoutMs: number | null;
}
export type WebhookEndpointStatus = 'DISABLED' | 'ENABLED';
export interface WebhookHealthWindow {
  attempts: number;
  p50Ms: number | null;
  p99Ms: number | null;
  succeeded: number;
  successRate: number | null;
}
