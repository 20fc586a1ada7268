import { z } from 'zod';
import type { Unit } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { deleteDraftUnit, insertUnitRow, markUnitPublished, unitOf, unitsPage } from './store.ts';

/** Units are Surface A's content items: created as `draft`, published through `units:publish`. */
export const UNITS_PER_PAGE_MAX = 100;

export const ListUnitsInput = z.strictObject({
  page: z.number().int().min(1).default(1),
  per_page: z.number().int().min(1).max(UNITS_PER_PAGE_MAX).default(25),
});
export const CreateUnitInput = z.strictObject({
  type: z.string().trim().min(1).max(64),
  caption: z.string().max(10_000),
  production_id: z.string().min(1).max(200).optional(),
});
export const UnitIdInput = z.strictObject({ unit_id: z.string().min(1) });

export const UNIT_STATUSES = ['draft', 'published'] as const;

export interface PublicUnit {
  id: string;
  object: 'unit';
  type: string;
  caption: string;
  production_id: string | null;
  status: (typeof UNIT_STATUSES)[number];
  published_at: string | null;
  livemode: true;
  created_at: string;
  updated_at: string;
}

export function presentUnit(u: Unit): PublicUnit {
  return {
    id: u.id,
    object: 'unit',
    type: u.type,
    caption: u.caption,
    production_id: u.productionId,
    status: u.status as PublicUnit['status'],
    published_at: u.publishedAt?.toISOString() ?? null,
    livemode: true,
    created_at: u.createdAt.toISOString(),
    updated_at: u.updatedAt.toISOString(),
  };
}

/** Newest first. `has_more` saves callers a request for an empty page. */
export async function listUnits(tx: Tx, organizationId: string, input: z.output<typeof ListUnitsInput>) {
  const rows = await unitsPage(tx, organizationId, (input.page - 1) * input.per_page, input.per_page + 1);
  return {
    units: rows.slice(0, input.per_page).map(presentUnit),
    page: input.page,
    per_page: input.per_page,
    has_more: rows.length > input.per_page,
  };
}

export async function insertUnit(deps: Deps, tx: Tx, organizationId: string, input: z.output<typeof CreateUnitInput>) {
  const now = deps.clock.now();
  const row = await insertUnitRow(tx, {
    id: newId('unit'),
    organizationId,
    type: input.type,
    caption: input.caption,
    productionId: input.production_id ?? null,
    createdAt: now,
    updatedAt: now,
  });
  return presentUnit(row);
}

/** One unit of the organization (404 for another organization's or a malformed id). */
export async function retrieveUnit(tx: Tx, organizationId: string, unitId: string) {
  return presentUnit(await findUnit(tx, organizationId, unitId));
}

async function findUnit(tx: Tx, organizationId: string, unitId: string) {
  const row = isId('unit', unitId) ? await unitOf(tx, organizationId, unitId) : null;
  if (!row) throw missing('unit', unitId, 'unit_id');
  return row;
}

export async function deleteUnit(_deps: Deps, tx: Tx, organizationId: string, unitId: string) {
  const row = await findUnit(tx, organizationId, unitId);
  if ((await deleteDraftUnit(tx, row.id)) !== 1)
    throw new DomainError('unit_not_draft', `Unit ${row.id} is ${row.status}; only a draft unit may be deleted`, 'unit_id');
  return { ok: true, success: true };
}

export async function publishUnit(deps: Deps, tx: Tx, organizationId: string, unitId: string) {
  const row = await findUnit(tx, organizationId, unitId);
  if (row.status !== 'draft') return { unit: presentUnit(row) }; // publishing twice is a no-op
  const now = deps.clock.now();
  const updated = await markUnitPublished(tx, row.id, now);
  return { unit: presentUnit(updated) };
}
