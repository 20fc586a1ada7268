import { z } from 'zod';
import type { Connection as ConnectionRow } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, isUniqueViolation, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { ensureEntity, findEntity, subjectFields, subjectOf } from '../entity/entity.ts';
import { capability, mutation, read, type Reader } from '../action/action.ts';
import { ListInput, listOf, newestFirst } from '../action/list.ts';
import { enqueueOperation, liveOperation, Operation, presentOperation } from '../operation/operation.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { LIVE_DEPLOYMENT_STATUSES } from '../distribution/states.ts';
import { isoTime } from '../shape.ts';
import { deploymentsOnConnection } from '../distribution/store.ts';
import { connectionById, connectionOfBrand, connectionsPage, insertConnectionRow, revokeConnectionIfActive } from './store.ts';

/**
 * Connections: an entity's account at a provider and what it granted, in
 * the brand Service-Brand selects: `active`, then `revoked` (final). At most
 * one active per (brand, entity, provider, account_id) (a partial unique
 * index): a second is 409 `resource_conflict`; a revoked one may be
 * connected again. A deployment may place through a connection of its
 * brand; revoking one starts a `deployment.teardown` operation (control
 * plane) for each live deployment that names it, in the same transaction.
 * The public vocabulary has no connection event, so none is emitted.
 */
export const CONNECTION_STATUSES = ['active', 'revoked'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

/** Provider names and grants are keys: lower case, digits, `_`, and for grants also `.` and `:` (e.g. `videos:publish`). */
const providerName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be a provider key: a lower-case letter, then up to 63 of a-z, 0-9, _');
const grant = z.string().regex(/^[a-z][a-z0-9_.:]{0,63}$/, 'must be a grant key: a lower-case letter, then up to 63 of a-z, 0-9, _, ., :');

export const CreateConnectionInput = z.strictObject({
  ...subjectFields,
  provider: providerName,
  account_id: z
    .string()
    .min(1)
    .max(255)
    .refine((v) => !v.includes('\u0000'), 'must not contain NUL characters'),
  grants: z
    .array(grant)
    .max(50)
    .refine((g) => new Set(g).size === g.length, 'must not repeat a grant')
    .default([]),
});

export const ListConnectionsInput = z.strictObject({
  entity: z.string().min(1).optional(),
  provider: providerName.optional(),
  status: z.enum(CONNECTION_STATUSES).optional(),
  ...ListInput.shape,
});

export const NoConnectionInput = z.strictObject({});

export const Connection = z.object({
  id: z.string().describe('prefix conn_'),
  object: z.literal('connection'),
  brand: z.string(),
  entity: z.string().describe('prefix ent_'),
  provider: z.string(),
  account_id: z.string(),
  grants: z.array(z.string()),
  status: z.enum(CONNECTION_STATUSES),
  revoked_at: isoTime.nullable(),
  livemode: z.boolean(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type PublicConnection = z.output<typeof Connection>;

/** What revoke answers: the connection, and the teardown operations it started (one per live deployment naming it). */
export const RevokedConnection = z.object({ connection: Connection, teardowns: z.array(Operation) });
export type PublicRevokedConnection = z.output<typeof RevokedConnection>;

export const presentConnection = (r: ConnectionRow): PublicConnection => ({
  id: r.id,
  object: 'connection',
  brand: r.brandId,
  entity: r.entityId,
  provider: r.provider,
  account_id: r.accountId,
  grants: r.grants as string[],
  status: r.status as ConnectionStatus,
  revoked_at: r.revokedAt?.toISOString() ?? null,
  livemode: true,
  created_at: r.createdAt.toISOString(),
  updated_at: r.updatedAt.toISOString(),
});

/** A connection of the caller's brand; anything else (other brand, other organization, bad id) is 404. */
export async function findConnection(db: Reader, caller: SurfaceBCaller, id: string, param: string | null = null): Promise<ConnectionRow> {
  const row = isId('connection', id) ? await connectionOfBrand(db, caller.organization.id, caller.brand.id, id) : null;
  if (!row) throw missing('connection', id, param);
  return row;
}

/** Records an entity's account at a provider; a live duplicate is 409 `resource_conflict`. */
export async function createConnection(
  deps: Deps,
  tx: Tx,
  caller: SurfaceBCaller,
  input: z.output<typeof CreateConnectionInput>,
): Promise<PublicConnection> {
  const entity = await ensureEntity(deps, tx, caller.organization.id, subjectOf(input));
  const now = deps.clock.now();
  try {
    const row = await insertConnectionRow(tx, {
      id: newId('connection'),
      organizationId: caller.organization.id,
      brandId: caller.brand.id,
      entityId: entity.id,
      provider: input.provider,
      accountId: input.account_id,
      grants: input.grants,
      createdAt: now,
      updatedAt: now,
    });
    return presentConnection(row);
  } catch (e) {
    if (isUniqueViolation(e))
      throw new DomainError(
        'resource_conflict',
        `Entity ${entity.id} already has an active connection to this ${input.provider} account; revoke it before connecting again`,
        'account_id',
      );
    throw e;
  }
}

/**
 * Revoke (final) and start the teardown of every live deployment placed
 * through the connection, each as its own control-plane operation.
 * Revoking a revoked connection is 409 `invalid_state_transition`.
 */
async function revokeConnection(deps: Deps, tx: Tx, caller: SurfaceBCaller, id: string): Promise<PublicRevokedConnection> {
  const found = await findConnection(tx, caller, id);
  const now = deps.clock.now();
  // Conditional on the status, so two concurrent revokes cannot both start teardowns.
  if ((await revokeConnectionIfActive(tx, found.id, now)) === 0)
    throw new DomainError('invalid_state_transition', 'Cannot revoke a connection that is revoked (allowed from: active)');
  const live = await deploymentsOnConnection(tx, found.id, LIVE_DEPLOYMENT_STATUSES);
  const teardowns = [];
  for (const dep of live) {
    // A provision still running on it settles first (its outcome would overwrite the teardown's): the teardown waits on it.
    const subject = { type: 'deployment', id: dep.id };
    const target = await liveOperation(tx, subject);
    const op = await enqueueOperation(deps, tx, {
      organizationId: dep.organizationId,
      brandId: caller.brand.id,
      subject,
      kind: 'deployment.teardown',
      plane: 'control',
      targetOperationId: target?.id ?? null,
      progress: { phase: 'request', connection: found.id },
    });
    teardowns.push(presentOperation(op));
  }
  const row = await connectionById(tx, found.id);
  return { connection: presentConnection(row), teardowns };
}

/** Newest first, within the caller's brand; filters by entity, provider and status. */
async function listConnections(db: Reader, caller: SurfaceBCaller, input: z.output<typeof ListConnectionsInput>) {
  const entity = input.entity === undefined ? undefined : await findEntity(db, caller.organization.id, subjectOf({ entity: input.entity }));
  const page = await newestFirst(
    input,
    (id, param) => findConnection(db, caller, id, param),
    (below, take) =>
      connectionsPage(
        db,
        {
          organizationId: caller.organization.id,
          brandId: caller.brand.id,
          entityId: entity?.id,
          provider: input.provider,
          status: input.status,
        },
        below,
        take,
      ),
  );
  return { ...page, data: page.data.map(presentConnection) };
}

/** The connection actions (src/domain/action/action.ts). */
export const connections = capability({ name: 'connections', title: 'Connections', resource: 'connections' })({
  create: mutation({
    summary:
      "Record an entity's account at a provider and its grants (entity, or external_user_id with issuer: created on first use); one active per brand, entity, provider and account",
    input: CreateConnectionInput,
    output: Connection,
    outcome: 'created',
    run: ({ deps, caller, input, db }) => createConnection(deps, db, caller, input),
  }),
  revoke: mutation({
    summary: 'Revoke a connection (final); each live deployment placed through it starts a deployment.teardown operation',
    params: ['id'],
    input: NoConnectionInput,
    output: RevokedConnection,
    outcome: 'ok',
    run: ({ deps, caller, params, db }) => revokeConnection(deps, db, caller, params.id),
  }),
  list: read({
    summary: "The brand's connections, newest first; filter by entity, provider and status",
    input: ListConnectionsInput,
    output: listOf(Connection),
    run: ({ caller, input, db }) => listConnections(db, caller, input),
  }),
  retrieve: read({
    summary: 'One connection of the brand',
    params: ['id'],
    retrieves: 'connection',
    input: NoConnectionInput,
    output: Connection,
    run: async ({ caller, params, db }) => presentConnection(await findConnection(db, caller, params.id)),
  }),
});
