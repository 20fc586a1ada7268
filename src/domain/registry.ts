import type { Action } from './action/action.ts';
import { assertions } from './assertion/assertion.ts';
import { brands } from './brand/brand.ts';
import { connectConfig } from './connect/config.ts';
import { handoffIssuers } from './connect/handoff-issuer.ts';
import { connections } from './connection/connection.ts';
import { eventDestinations } from './destination/destination.ts';
import { deployments, distributions } from './distribution/distribution.ts';
import { enrollments } from './enrollment/enrollment.ts';
import { entities } from './entity/entities.ts';
import { eventTypes } from './event/catalogue.ts';
import { events } from './event/event.ts';
import { operations } from './operation/operation.ts';
import { ledger } from './payout/ledger.ts';
import { payouts } from './payout/payout.ts';
import { performance } from './performance/performance.ts';
import { programs } from './program/program.ts';
import { tiers } from './program/tiers.ts';
import { relationships } from './relationship/relationship.ts';
import { webhookDeliveries } from './webhook/delivery.ts';
import { webhookEndpoints } from './webhook/endpoint.ts';
import { webhookReplays } from './webhook/replay.ts';

/**
 * Every Surface B capability's action table, in the order the documents list
 * them. A front walks this index (REST: rest/platform/bindings.ts, GraphQL's
 * `node(id:)`, the parity test) and binds each action by name; a capability
 * that is not listed here is on no front.
 */
export const REGISTRY = {
  webhookEndpoints,
  webhookReplays,
  webhookDeliveries,
  eventDestinations,
  events,
  eventTypes,
  operations,
  distributions,
  deployments,
  assertions,
  programs,
  tiers,
  enrollments,
  performance,
  ledger,
  payouts,
  brands,
  entities,
  relationships,
  connections,
  connectConfig,
  handoffIssuers,
} as const;

/** Every action, capability by capability. */
export const ACTIONS: readonly Action[] = Object.values(REGISTRY).flatMap((table) => Object.values(table) as Action[]);

const byName = new Map(ACTIONS.map((a) => [a.name, a]));
if (byName.size !== ACTIONS.length)
  throw new Error('two actions share a name: every name must be unique (it keys bindings and idempotency)');

/** The action of that name, if any. */
export const actionNamed = (name: string): Action | undefined => byName.get(name);

/** Every scope an action needs (its own and `alsoNeeds`), once each. */
export const ACTION_SCOPES: readonly string[] = [...new Set(ACTIONS.flatMap((a) => [a.scope, ...(a.alsoNeeds ?? [])]))];
