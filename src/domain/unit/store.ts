import type { Tx } from '../../db/database.ts';
import type { Unit } from '../../db/generated/client.ts';

/** The unit capability's SQL (Surface A's content items). */

/** A page of the organization's units, newest first. */
export function unitsPage(tx: Tx, organizationId: string, skip: number, take: number): Promise<Unit[]> {
  return tx.unit.findMany({ where: { organizationId }, orderBy: { id: 'desc' }, skip, take });
}

export function insertUnitRow(
  tx: Tx,
  row: Pick<Unit, 'id' | 'organizationId' | 'type' | 'caption' | 'productionId' | 'createdAt' | 'updatedAt'>,
): Promise<Unit> {
  return tx.unit.create({ data: row });
}

export function unitOf(tx: Tx, organizationId: string, id: string): Promise<Unit | null> {
  return tx.unit.findFirst({ where: { id, organizationId } });
}

/** Conditional delete: a concurrent publish cannot slip between check and delete. 1 when deleted, 0 when not a draft. */
export async function deleteDraftUnit(tx: Tx, id: string): Promise<number> {
  return (await tx.unit.deleteMany({ where: { id, status: 'draft' } })).count;
}

export function markUnitPublished(tx: Tx, id: string, at: Date): Promise<Unit> {
  return tx.unit.update({ where: { id }, data: { status: 'published', publishedAt: at, updatedAt: at } });
}
