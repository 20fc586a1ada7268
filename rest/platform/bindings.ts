import { z } from 'zod';
import type { Action } from '../../src/domain/action/action.ts';
import type { Deps } from '../../src/domain/context.ts';
import { ListEventsInput } from '../../src/domain/event/event.ts';
import { PUBLIC_EVENT_TYPES } from '../../src/domain/event/types.ts';
import { ListOperationsInput, OPERATION_STATUSES } from '../../src/domain/operation/operation.ts';
import { ACTIONS } from '../../src/domain/registry.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute, type ActionRoute } from './answer.ts';

/** What REST adds to an action: the spec's table row (the tag and the summary are the action's capability's and its own). */
export type Binding = Omit<ActionRoute, 'tag' | 'summary' | 'errors'> & {
  /** REST's own words where they name a status the action's summary leaves to the front. */
  summary?: string;
  /** When they differ from the capability's (`errorsOf`). */
  errors?: number[];
};

const WITH_CONFLICT = [400, 401, 403, 404, 409, 429, 503];

/**
 * Every Surface B action REST carries, by name: method, path, operationId,
 * the success response's description and envelope. `restActionRoutes` walks
 * the registry and fails at startup on an action with no row here or a row
 * naming no action.
 */
export const REST_BINDINGS: Readonly<Record<string, Binding>> = {
  // Webhook endpoints
  'webhook_endpoints.create': {
    method: 'POST',
    path: '/webhook_endpoints',
    operationId: 'createWebhookEndpoint',
    description: 'The wrapped endpoint, with `secret`',
    envelope: 'webhook_endpoint',
  },
  'webhook_endpoints.list': {
    method: 'GET',
    path: '/webhook_endpoints',
    operationId: 'listWebhookEndpoints',
    description: 'A page of endpoints (no secrets)',
  },
  'webhook_endpoints.retrieve': {
    method: 'GET',
    path: '/webhook_endpoints/:id',
    operationId: 'retrieveWebhookEndpoint',
    description: 'The wrapped endpoint',
    envelope: 'webhook_endpoint',
  },
  'webhook_endpoints.update': {
    method: 'POST',
    path: '/webhook_endpoints/:id',
    operationId: 'updateWebhookEndpoint',
    description: 'The wrapped endpoint',
    envelope: 'webhook_endpoint',
  },
  'webhook_endpoints.rotate_secret': {
    method: 'POST',
    path: '/webhook_endpoints/:id/rotate_secret',
    operationId: 'rotateWebhookEndpointSecret',
    description: 'The wrapped endpoint with its new `secret`',
    envelope: 'webhook_endpoint',
  },
  'webhook_endpoints.delete': {
    method: 'DELETE',
    path: '/webhook_endpoints/:id',
    operationId: 'deleteWebhookEndpoint',
    description: 'Deleted',
  },
  'webhook_endpoints.replay': {
    method: 'POST',
    path: '/webhook_endpoints/:id/replay',
    operationId: 'replayWebhookEndpoint',
    description: 'The wrapped operation doing the replay',
    envelope: 'operation',
  },
  'webhook_endpoints.cancel_replay': {
    method: 'POST',
    path: '/webhook_endpoints/:id/replay/cancel',
    operationId: 'cancelWebhookEndpointReplay',
    description: 'The wrapped cancel operation (webhook_endpoint.replay_cancel)',
    envelope: 'operation',
  },
  'webhook_deliveries.list': {
    method: 'GET',
    path: '/webhook_endpoints/:id/deliveries',
    operationId: 'listWebhookDeliveries',
    description: 'A page of deliveries',
  },
  'webhook_deliveries.list_for_event': {
    method: 'GET',
    path: '/events/:id/deliveries',
    operationId: 'listEventDeliveries',
    description: 'A page of deliveries',
  },
  'webhook_deliveries.retry': {
    method: 'POST',
    path: '/webhook_endpoints/:id/deliveries/:delivery_id/retry',
    operationId: 'retryWebhookDelivery',
    description: 'The wrapped delivery, due now',
    envelope: 'webhook_delivery',
    summary: 'Re-queue a failing or exhausted delivery for an immediate attempt (400 when the endpoint is disabled)',
  },
  // Event destinations
  'event_destinations.create': {
    method: 'POST',
    path: '/event_destinations',
    operationId: 'createEventDestination',
    description: 'The wrapped destination, with `secret`',
    envelope: 'event_destination',
  },
  'event_destinations.list': {
    method: 'GET',
    path: '/event_destinations',
    operationId: 'listEventDestinations',
    description: 'A page of destinations (no secrets, URLs masked)',
  },
  'event_destinations.retrieve': {
    method: 'GET',
    path: '/event_destinations/:id',
    operationId: 'retrieveEventDestination',
    description: 'The wrapped destination',
    envelope: 'event_destination',
  },
  'event_destinations.update': {
    method: 'POST',
    path: '/event_destinations/:id',
    operationId: 'updateEventDestination',
    description: 'The wrapped destination',
    envelope: 'event_destination',
  },
  'event_destinations.rotate_secret': {
    method: 'POST',
    path: '/event_destinations/:id/rotate_secret',
    operationId: 'rotateEventDestinationSecret',
    description: 'The wrapped destination with its new `secret`',
    envelope: 'event_destination',
  },
  'event_destinations.delete': {
    method: 'DELETE',
    path: '/event_destinations/:id',
    operationId: 'deleteEventDestination',
    description: 'Deleted',
  },
  'event_destinations.replay': {
    method: 'POST',
    path: '/event_destinations/:id/replay',
    operationId: 'replayEventDestination',
    description: 'The wrapped operation doing the replay',
    envelope: 'operation',
  },
  'event_destinations.cancel_replay': {
    method: 'POST',
    path: '/event_destinations/:id/replay/cancel',
    operationId: 'cancelEventDestinationReplay',
    description: 'The wrapped cancel operation (event_destination.replay_cancel)',
    envelope: 'operation',
  },
  'event_destinations.list_deliveries': {
    method: 'GET',
    path: '/event_destinations/:id/deliveries',
    operationId: 'listEventDestinationDeliveries',
    description: 'A page of deliveries',
  },
  'event_destinations.retry_delivery': {
    method: 'POST',
    path: '/event_destinations/:id/deliveries/:delivery_id/retry',
    operationId: 'retryEventDestinationDelivery',
    description: 'The wrapped delivery, due now',
    envelope: 'webhook_delivery',
    summary: 'Re-queue a failing or exhausted delivery for an immediate attempt (400 when the destination is disabled)',
  },
  // Events
  'events.list': {
    method: 'GET',
    path: '/events',
    operationId: 'listEvents',
    description: 'A page of events, oldest first',
    documentedQuery: ListEventsInput.extend({ type: z.enum(PUBLIC_EVENT_TYPES).optional() }),
  },
  'events.retrieve': { method: 'GET', path: '/events/:id', operationId: 'retrieveEvent', description: 'The event' },
  // One page: no cursor, no 404.
  'event_types.list': {
    method: 'GET',
    path: '/event_types',
    operationId: 'listEventTypes',
    description: 'Every public event type',
    errors: [400, 401, 403, 429, 503],
  },
  'event_types.retrieve': { method: 'GET', path: '/event_types/:type', operationId: 'retrieveEventType', description: 'The event type' },
  // Operations
  'operations.list': {
    method: 'GET',
    path: '/operations',
    operationId: 'listOperations',
    description: 'A page of operations',
    documentedQuery: ListOperationsInput.extend({ status: z.enum(OPERATION_STATUSES).optional() }),
  },
  'operations.retrieve': {
    method: 'GET',
    path: '/operations/:id',
    operationId: 'retrieveOperation',
    description: 'The wrapped operation',
    envelope: 'operation',
  },
  // Distributions
  'distributions.create': {
    method: 'POST',
    path: '/distributions',
    operationId: 'createDistribution',
    description: 'The operation doing the work, and the distribution',
  },
  'distributions.validate': {
    method: 'POST',
    path: '/distributions/validate',
    operationId: 'validateDistribution',
    description: 'The request would be accepted',
  },
  'distributions.list': { method: 'GET', path: '/distributions', operationId: 'listDistributions', description: 'A page of distributions' },
  'distributions.retrieve': {
    method: 'GET',
    path: '/distributions/:id',
    operationId: 'retrieveDistribution',
    description: 'The wrapped distribution',
    envelope: 'distribution',
  },
  'distributions.launch': {
    method: 'POST',
    path: '/distributions/:id/launch',
    operationId: 'launchDistribution',
    description: 'The operation doing the work, and the distribution',
  },
  'distributions.pause': {
    method: 'POST',
    path: '/distributions/:id/pause',
    operationId: 'pauseDistribution',
    description: 'The operation doing the work, and the distribution',
  },
  'distributions.resume': {
    method: 'POST',
    path: '/distributions/:id/resume',
    operationId: 'resumeDistribution',
    description: 'The operation doing the work, and the distribution',
  },
  'distributions.cancel': {
    method: 'POST',
    path: '/distributions/:id/cancel',
    operationId: 'cancelDistribution',
    description: 'The operation doing the work, and the distribution',
  },
  // Deployments
  // Documented with their distribution's conflicts.
  'deployments.list': {
    method: 'GET',
    path: '/deployments',
    operationId: 'listDeployments',
    description: 'A page of deployments',
    errors: WITH_CONFLICT,
  },
  'deployments.retrieve': {
    method: 'GET',
    path: '/deployments/:id',
    operationId: 'retrieveDeployment',
    description: 'The wrapped deployment',
    envelope: 'deployment',
    errors: WITH_CONFLICT,
  },
  // Assertions
  'assertions.create': {
    method: 'POST',
    path: '/assertions',
    operationId: 'createAssertion',
    description: 'The assertion event (200: the current one, nothing appended)',
    summary: 'State a claim: 201 when it changed (new event), 200 when it was already in that state',
  },
  'assertions.revoke': {
    method: 'POST',
    path: '/assertions/revoke',
    operationId: 'revokeAssertion',
    description: 'The revocation (200: already absent)',
    summary: 'Revoke a claim: 201 with the revoked event when it was present, 200 and nothing appended when absent',
  },
  'assertions.list': { method: 'GET', path: '/assertions', operationId: 'listAssertions', description: 'A page of current claims' },
  'assertions.retrieve': {
    method: 'GET',
    path: '/assertions/:id',
    operationId: 'retrieveAssertionEvent',
    description: 'The assertion event',
  },
  // Programs
  'programs.create': { method: 'POST', path: '/programs', operationId: 'createProgram', description: 'The program' },
  'programs.list': { method: 'GET', path: '/programs', operationId: 'listPrograms', description: 'A page of programs' },
  'programs.retrieve': { method: 'GET', path: '/programs/:id', operationId: 'retrieveProgram', description: 'The program' },
  'programs.add_requirement': {
    method: 'POST',
    path: '/programs/:id/requirements',
    operationId: 'createProgramRequirement',
    description: 'The requirement',
  },
  'programs.list_requirements': {
    method: 'GET',
    path: '/programs/:id/requirements',
    operationId: 'listProgramRequirements',
    description: 'Every requirement of the program',
  },
  'programs.remove_requirement': {
    method: 'DELETE',
    path: '/programs/:id/requirements/:requirement',
    operationId: 'deleteProgramRequirement',
    description: 'Deleted',
  },
  'programs.create_tier': {
    method: 'POST',
    path: '/programs/:id/tiers',
    operationId: 'createProgramTier',
    description: 'The rung and the retier operation',
    summary:
      'Add a rung to the tier ladder; answers 202 with the program.retier operation re-evaluating every active enrollment (trigger tier_change)',
  },
  'programs.list_tiers': {
    method: 'GET',
    path: '/programs/:id/tiers',
    operationId: 'listProgramTiers',
    description: 'Every rung of the ladder',
  },
  'programs.update_tier': {
    method: 'POST',
    path: '/programs/:id/tiers/:tier',
    operationId: 'updateProgramTier',
    description: 'The rung and the retier operation',
    summary:
      'Change a rung (name, metric, threshold, rate_bps); answers 202 with the program.retier operation re-evaluating every active enrollment (trigger tier_change)',
  },
  'programs.delete_tier': {
    method: 'DELETE',
    path: '/programs/:id/tiers/:tier',
    operationId: 'deleteProgramTier',
    description: 'The deleted rung and the retier operation',
    summary: 'Remove a rung; answers 202 with the program.retier operation re-evaluating every active enrollment (trigger tier_change)',
  },
  // Enrollments
  'enrollments.create': { method: 'POST', path: '/enrollments', operationId: 'createEnrollment', description: 'The enrollment' },
  'enrollments.approve': {
    method: 'POST',
    path: '/enrollments/:id/approve',
    operationId: 'approveEnrollment',
    description: 'The enrollment',
  },
  'enrollments.reject': { method: 'POST', path: '/enrollments/:id/reject', operationId: 'rejectEnrollment', description: 'The enrollment' },
  'enrollments.activate': {
    method: 'POST',
    path: '/enrollments/:id/activate',
    operationId: 'activateEnrollment',
    description: 'The enrollment',
  },
  'enrollments.resume': { method: 'POST', path: '/enrollments/:id/resume', operationId: 'resumeEnrollment', description: 'The enrollment' },
  'enrollments.list': { method: 'GET', path: '/enrollments', operationId: 'listEnrollments', description: 'A page of enrollments' },
  'enrollments.retrieve': { method: 'GET', path: '/enrollments/:id', operationId: 'retrieveEnrollment', description: 'The enrollment' },
  // Performance
  'performance.record_measurements': {
    method: 'POST',
    path: '/performance/measurements',
    operationId: 'recordMeasurements',
    description: 'The batch: one measurement per item sent, in order, duplicates marked',
  },
  'performance.rollups': {
    method: 'GET',
    path: '/performance/rollups',
    operationId: 'listPerformanceRollups',
    description: 'A page of rollups; the next page: until = the last period_start',
  },
  // Payouts
  'payouts.ledger': { method: 'GET', path: '/payouts/ledger', operationId: 'listLedgerEntries', description: 'A page of ledger entries' },
  'payouts.reverse_entry': {
    method: 'POST',
    path: '/payouts/ledger/:id/reverse',
    operationId: 'reverseLedgerEntry',
    description: 'The wrapped compensating entry',
    envelope: 'ledger_entry',
  },
  'payouts.run': {
    method: 'POST',
    path: '/payouts/runs',
    operationId: 'runPayouts',
    description: 'The wrapped payout.run operation',
    envelope: 'operation',
  },
  'payouts.cancel_run': {
    method: 'POST',
    path: '/payouts/runs/:id/cancel',
    operationId: 'cancelPayoutRun',
    description: 'The wrapped payout.run_cancel operation',
    envelope: 'operation',
  },
  'payouts.list': { method: 'GET', path: '/payouts', operationId: 'listPayouts', description: 'A page of payouts' },
  'payouts.retrieve': { method: 'GET', path: '/payouts/:id', operationId: 'retrievePayout', description: 'The payout' },
  // Brands
  'brands.list': { method: 'GET', path: '/brands', operationId: 'listBrands', description: 'A page of brands' },
  'brands.retrieve': { method: 'GET', path: '/brands/:id', operationId: 'retrieveBrand', description: 'The brand' },
  // Entities
  'entities.list': { method: 'GET', path: '/entities', operationId: 'listEntities', description: 'A page of entities' },
  'entities.retrieve': { method: 'GET', path: '/entities/:id', operationId: 'retrieveEntity', description: 'The entity' },
  // Relationships
  'relationships.create': { method: 'POST', path: '/relationships', operationId: 'createRelationship', description: 'The relationship' },
  'relationships.activate': {
    method: 'POST',
    path: '/relationships/:id/activate',
    operationId: 'activateRelationship',
    description: 'The relationship',
  },
  'relationships.pause': {
    method: 'POST',
    path: '/relationships/:id/pause',
    operationId: 'pauseRelationship',
    description: 'The relationship',
  },
  'relationships.resume': {
    method: 'POST',
    path: '/relationships/:id/resume',
    operationId: 'resumeRelationship',
    description: 'The relationship',
  },
  'relationships.end': { method: 'POST', path: '/relationships/:id/end', operationId: 'endRelationship', description: 'The relationship' },
  'relationships.list': { method: 'GET', path: '/relationships', operationId: 'listRelationships', description: 'A page of relationships' },
  'relationships.retrieve': {
    method: 'GET',
    path: '/relationships/:id',
    operationId: 'retrieveRelationship',
    description: 'The relationship',
  },
  // Connections
  'connections.create': { method: 'POST', path: '/connections', operationId: 'createConnection', description: 'The connection' },
  'connections.list': { method: 'GET', path: '/connections', operationId: 'listConnections', description: 'A page of connections' },
  'connections.retrieve': { method: 'GET', path: '/connections/:id', operationId: 'retrieveConnection', description: 'The connection' },
  'connections.revoke': {
    method: 'POST',
    path: '/connections/:id/revoke',
    operationId: 'revokeConnection',
    description: 'The revoked connection and the teardown operations it started',
  },
  // Connect configuration
  'connect_config.retrieve': {
    method: 'GET',
    path: '/connect_config',
    operationId: 'retrieveConnectConfig',
    description: 'The connect configuration',
  },
  'connect_config.update': {
    method: 'POST',
    path: '/connect_config',
    operationId: 'updateConnectConfig',
    description: 'The connect configuration',
  },
  // Handoff issuers
  'handoff_issuers.create': {
    method: 'POST',
    path: '/handoff/issuers',
    operationId: 'createHandoffIssuer',
    description: 'The issuer (with its secret, for HS256)',
  },
  'handoff_issuers.list': { method: 'GET', path: '/handoff/issuers', operationId: 'listHandoffIssuers', description: 'A page of issuers' },
  'handoff_issuers.retrieve': {
    method: 'GET',
    path: '/handoff/issuers/:id',
    operationId: 'retrieveHandoffIssuer',
    description: 'The issuer',
  },
  'handoff_issuers.rotate': {
    method: 'POST',
    path: '/handoff/issuers/:id/rotate',
    operationId: 'rotateHandoffIssuer',
    description: 'The issuer (with its new secret, for HS256)',
  },
  'handoff_issuers.delete': { method: 'DELETE', path: '/handoff/issuers/:id', operationId: 'deleteHandoffIssuer', description: 'Deleted' },
};

/** The statuses a capability's routes document: a conflict (409) only where it changes something. */
function errorsOf(action: Action): number[] {
  const changes = ACTIONS.some((a) => a.capability === action.capability && a.effect.kind !== 'read');
  return changes ? WITH_CONFLICT : WITH_CONFLICT.filter((s) => s !== 409);
}

/** Surface B's action routes, walked from the registry: every action on the REST front, bound once. */
export function restActionRoutes(deps: Deps): RouteDef[] {
  const onRest = ACTIONS.filter((a) => a.fronts.includes('rest'));
  const stale = Object.keys(REST_BINDINGS).filter((name) => !onRest.some((a) => a.name === name));
  if (stale.length) throw new Error(`REST bindings name no REST action: ${stale.join(', ')}`);
  return onRest.map((action) => {
    const b = REST_BINDINGS[action.name];
    if (!b) throw new Error(`${action.name} is on the REST front but has no binding in rest/platform/bindings.ts`);
    return actionRoute(deps, action, {
      ...b,
      summary: b.summary ?? action.summary,
      tag: action.capability.title,
      errors: b.errors ?? errorsOf(action),
    });
  });
}
