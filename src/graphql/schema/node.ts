import type { GraphQLSchema } from 'graphql';
import { invoke, type Action } from '../../domain/action/action.ts';
import { retrieveBrand } from '../../domain/brand/brand.ts';
import { isDomainError } from '../../domain/errors.ts';
import { ID_PREFIX } from '../../domain/id.ts';
import { retrieveLedgerEntry } from '../../domain/payout/ledger.ts';
import { retrieveRequirement } from '../../domain/program/program.ts';
import { organizationById } from '../../domain/organization/store.ts';
import { ACTIONS } from '../../domain/registry.ts';
import { retrieveUnit } from '../../domain/unit/unit.ts';
import { retrieveWebhookDelivery } from '../../domain/webhook/delivery.ts';
import { boundFields } from '../bound-fields.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';

/**
 * The Relay `Node` interface over the prefixed ids, and `node(id:)`. A prefix
 * is answered by the registry's action that `retrieves` its kind, invoked
 * through the seam like the type's own field (the same scope, the same
 * organization and brand rule); the type is the one that field returns.
 * Anything the caller could not read through that field (an unknown prefix, a
 * malformed or unknown id, another organization's object, another brand's
 * object, a missing scope) answers null, all alike.
 */
const RETRIEVES = new Map(ACTIONS.flatMap((a) => (a.retrieves ? [[ID_PREFIX[a.retrieves] as string, a] as const] : [])));

/** A type no retrieve action reads (each says why), looked up here with the scope its own field needs (null: any caller). */
interface Lookup {
  type: string;
  scope: string | null;
  load: (ctx: GraphQLContext, id: string) => Promise<{ id: string } | null>;
}

const org = (ctx: GraphQLContext) => ctx.caller.organization.id;

const LOOKUPS: Partial<Record<string, Lookup>> = {
  // The caller's own organization and brands, as `viewer` answers them: no scope.
  [ID_PREFIX.organization]: {
    type: 'Organization',
    scope: null,
    load: (ctx, id) => (id === org(ctx) ? organizationById(ctx.deps.db.prisma, id) : Promise.resolve(null)),
  },
  [ID_PREFIX.brand]: { type: 'Brand', scope: null, load: (ctx, id) => retrieveBrand(ctx.deps.db.prisma, org(ctx), id) },
  // Surface A's unit: not a Surface B action.
  [ID_PREFIX.unit]: { type: 'Unit', scope: 'units:read', load: (ctx, id) => retrieveUnit(ctx.deps.db.prisma, org(ctx), id) },
  // Read only through their parent's fields (and here): no retrieve action of their own.
  [ID_PREFIX.delivery]: {
    type: 'WebhookDelivery',
    scope: 'webhooks:read',
    load: (ctx, id) => retrieveWebhookDelivery(ctx.deps, org(ctx), id),
  },
  [ID_PREFIX.requirement]: {
    type: 'ProgramRequirement',
    scope: 'program_requirements:read',
    load: (ctx, id) => retrieveRequirement(ctx.deps, ctx.caller, id),
  },
  [ID_PREFIX.ledgerEntry]: { type: 'LedgerEntry', scope: 'payouts:read', load: (ctx, id) => retrieveLedgerEntry(ctx.deps, ctx.caller, id) },
};

const prefixOf = (id: string) => id.slice(0, Math.max(0, id.indexOf('_')));

/** The type each action's own field returns. */
function typeOfAction(schema: GraphQLSchema, action: Action): string {
  const type = boundFields(schema).get(action.name)?.[0]?.returns;
  if (!type) throw new Error(`${action.name} retrieves a node but no GraphQL field is bound to it`);
  return type;
}

export const Node = builder.interfaceRef<{ id: string }>('Node').implement({
  description: 'An object with a prefixed id (op_, dist_, we_, …); node(id:) fetches any of them',
  fields: (t) => ({ id: t.exposeID('id', { description: 'The prefixed id, the same as in REST' }) }),
  resolveType: (o, _ctx, info) => {
    const prefix = prefixOf(o.id);
    const action = RETRIEVES.get(prefix);
    return action ? typeOfAction(info.schema, action) : LOOKUPS[prefix]!.type;
  },
});

/** Null for what the type's own field would refuse to show: an unknown id, or (through the seam) a missing scope. */
const UNSEEN = new Set(['resource_missing', 'missing_scope']);

builder.queryField('node', (t) =>
  t.field({
    type: Node,
    nullable: true,
    description:
      "Any object by its prefixed id, with the scope its own field needs (e.g. operations:read for op_). Null when that field could not read it: unknown or malformed id, another organization's or another brand's object, or a missing scope.",
    args: { id: t.arg.id({ required: true, description: 'A prefixed id, e.g. op_…' }) },
    resolve: async (_r, a, ctx) => {
      const id = String(a.id);
      const action = RETRIEVES.get(prefixOf(id));
      const lookup = LOOKUPS[prefixOf(id)];
      if (!action && (!lookup || (lookup.scope !== null && !ctx.caller.scopes.has(lookup.scope)))) return null;
      try {
        if (action) return (await invoke({ deps: ctx.deps, caller: ctx.caller }, action, { params: { id } })).value as { id: string };
        return await lookup!.load(ctx, id);
      } catch (e) {
        if (isDomainError(e) && UNSEEN.has(e.code)) return null;
        throw e;
      }
    },
  }),
);
