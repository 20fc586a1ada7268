import { retrieveBrand } from '../../domain/brand/brand.ts';
import { retrieveEntity } from '../../domain/entity/entities.ts';
import { retrieveRelationship } from '../../domain/relationship/relationship.ts';
import { retrieveConnection } from '../../domain/connection/connection.ts';
import { retrieveHandoffIssuer } from '../../domain/connect/handoff-issuer.ts';
import { retrieveAssertion } from '../../domain/assertion/assertion.ts';
import { retrieveDeployment, retrieveDistribution } from '../../domain/distribution/distribution.ts';
import { retrieveEnrollment } from '../../domain/enrollment/enrollment.ts';
import { isDomainError } from '../../domain/errors.ts';
import { retrieveEvent } from '../../domain/event/event.ts';
import { ID_PREFIX } from '../../domain/id.ts';
import { retrieveOperation } from '../../domain/operation/operation.ts';
import { retrieveProgram, retrieveRequirement } from '../../domain/program/program.ts';
import { retrieveUnit } from '../../domain/unit/unit.ts';
import { retrieveWebhookDelivery } from '../../domain/webhook/delivery.ts';
import { retrieveWebhookEndpoint } from '../../domain/webhook/endpoint.ts';
import { retrieveLedgerEntry } from '../../domain/payout/ledger.ts';
import { retrievePayout } from '../../domain/payout/payout.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';

/**
 * The Relay `Node` interface over the prefixed ids, and `node(id:)`. Each
 * type is looked up exactly as its own field looks it up (the same domain
 * retrieve, so the same organization and brand rule) and needs the scope
 * that field needs. Anything the caller could not read through that field
 * (an unknown prefix, a malformed or unknown id, another organization's
 * object, another brand's object, a missing scope) answers null, all alike.
 */
interface Lookup {
  type: string;
  /** The scope the type's own field needs; null: any caller (its own organization and brands, as `viewer`). */
  scope: string | null;
  load: (ctx: GraphQLContext, id: string) => Promise<{ id: string } | null>;
}

const org = (ctx: GraphQLContext) => ctx.caller.organization.id;

const LOOKUPS: Partial<Record<string, Lookup>> = {
  [ID_PREFIX.organization]: {
    type: 'Organization',
    scope: null,
    load: (ctx, id) => (id === org(ctx) ? ctx.deps.db.prisma.organization.findUnique({ where: { id } }) : Promise.resolve(null)),
  },
  [ID_PREFIX.brand]: {
    type: 'Brand',
    scope: null,
    load: (ctx, id) => retrieveBrand(ctx.deps.db.prisma, org(ctx), id),
  },
  [ID_PREFIX.unit]: { type: 'Unit', scope: 'units:read', load: (ctx, id) => retrieveUnit(ctx.deps.db.prisma, org(ctx), id) },
  [ID_PREFIX.event]: { type: 'Event', scope: 'events:read', load: (ctx, id) => retrieveEvent(ctx.deps, org(ctx), id) },
  [ID_PREFIX.webhookEndpoint]: {
    type: 'WebhookEndpoint',
    scope: 'webhooks:read',
    load: (ctx, id) => retrieveWebhookEndpoint(ctx.deps, org(ctx), id),
  },
  [ID_PREFIX.delivery]: {
    type: 'WebhookDelivery',
    scope: 'webhooks:read',
    load: (ctx, id) => retrieveWebhookDelivery(ctx.deps, org(ctx), id),
  },
  [ID_PREFIX.assertion]: { type: 'Assertion', scope: 'assertions:read', load: (ctx, id) => retrieveAssertion(ctx.deps, org(ctx), id) },
  [ID_PREFIX.program]: { type: 'Program', scope: 'programs:read', load: (ctx, id) => retrieveProgram(ctx.deps, ctx.caller, id) },
  [ID_PREFIX.requirement]: {
    type: 'ProgramRequirement',
    scope: 'program_requirements:read',
    load: (ctx, id) => retrieveRequirement(ctx.deps, ctx.caller, id),
  },
  [ID_PREFIX.enrollment]: {
    type: 'Enrollment',
    scope: 'enrollments:read',
    load: (ctx, id) => retrieveEnrollment(ctx.deps, ctx.caller, id),
  },
  [ID_PREFIX.entity]: {
    type: 'Entity',
    scope: 'entities:read',
    load: (ctx, id) => retrieveEntity(ctx.deps.db.prisma, ctx.caller, id, ctx.deps.clock.now()),
  },
  [ID_PREFIX.relationship]: {
    type: 'Relationship',
    scope: 'relationships:read',
    load: (ctx, id) => retrieveRelationship(ctx.deps, ctx.caller, id),
  },
  [ID_PREFIX.connection]: {
    type: 'ConnectedAccount',
    scope: 'connections:read',
    load: (ctx, id) => retrieveConnection(ctx.deps, ctx.caller, id),
  },
  [ID_PREFIX.handoffIssuer]: {
    type: 'HandoffIssuer',
    scope: 'handoff:read',
    load: (ctx, id) => retrieveHandoffIssuer(ctx.deps, ctx.caller, id),
  },
  [ID_PREFIX.operation]: { type: 'Operation', scope: 'operations:read', load: (ctx, id) => retrieveOperation(ctx.deps, org(ctx), id) },
  [ID_PREFIX.distribution]: {
    type: 'Distribution',
    scope: 'distributions:read',
    load: (ctx, id) => retrieveDistribution(ctx.deps, ctx.caller, id),
  },
  [ID_PREFIX.deployment]: {
    type: 'Deployment',
    scope: 'deployments:read',
    load: (ctx, id) => retrieveDeployment(ctx.deps, ctx.caller, id),
  },
  [ID_PREFIX.payout]: { type: 'Payout', scope: 'payouts:read', load: (ctx, id) => retrievePayout(ctx.deps, ctx.caller, id) },
  [ID_PREFIX.ledgerEntry]: { type: 'LedgerEntry', scope: 'payouts:read', load: (ctx, id) => retrieveLedgerEntry(ctx.deps, ctx.caller, id) },
};

const lookupOf = (id: string) => LOOKUPS[id.slice(0, Math.max(0, id.indexOf('_')))];

export const Node = builder.interfaceRef<{ id: string }>('Node').implement({
  description: 'An object with a prefixed id (op_, dist_, we_, …); node(id:) fetches any of them',
  fields: (t) => ({ id: t.exposeID('id', { description: 'The prefixed id, the same as in REST' }) }),
  resolveType: (o) => lookupOf(o.id)!.type,
});

builder.queryField('node', (t) =>
  t.field({
    type: Node,
    nullable: true,
    description:
      "Any object by its prefixed id, with the scope its own field needs (e.g. operations:read for op_). Null when that field could not read it: unknown or malformed id, another organization's or another brand's object, or a missing scope.",
    args: { id: t.arg.id({ required: true, description: 'A prefixed id, e.g. op_…' }) },
    resolve: async (_r, a, ctx) => {
      const id = String(a.id);
      const lookup = lookupOf(id);
      if (!lookup || (lookup.scope !== null && !ctx.caller.scopes.has(lookup.scope))) return null;
      try {
        return await lookup.load(ctx, id);
      } catch (e) {
        if (isDomainError(e) && e.code === 'resource_missing') return null;
        throw e;
      }
    },
  }),
);
