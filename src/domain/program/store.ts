import type { Tx } from '../../db/database.ts';
import type { Prisma, PrismaClient, Program, ProgramRequirement, ProgramTier } from '../../db/generated/client.ts';

/** The program capability's SQL: programs, their requirements and their tier ladders. */
type Reader = Tx | PrismaClient;

export function programOfBrand(db: Reader, organizationId: string, brandId: string, id: string): Promise<Program | null> {
  return db.program.findFirst({ where: { id, organizationId, brandId } });
}

/** Whether the program is the brand's (its id), whatever the organization. */
export function brandProgramId(db: Reader, id: string, brandId: string): Promise<{ id: string } | null> {
  return db.program.findFirst({ where: { id, brandId }, select: { id: true } });
}

/** The ids of the brand's programs. */
export function brandProgramIds(db: Reader, organizationId: string, brandId: string): Promise<{ id: string }[]> {
  return db.program.findMany({ where: { organizationId, brandId }, select: { id: true } });
}

/** Those of `ids` that are the brand's programs. */
export function brandProgramsIn(db: Reader, ids: string[], organizationId: string, brandId: string): Promise<{ id: string }[]> {
  return db.program.findMany({ where: { id: { in: ids }, organizationId, brandId }, select: { id: true } });
}

/** Up to `take` of the brand's programs below a cursor, newest first. */
export function programsPage(
  db: Reader,
  organizationId: string,
  brandId: string,
  below: { id?: { lt: string } },
  take: number,
): Promise<Program[]> {
  return db.program.findMany({ where: { organizationId, brandId, ...below }, orderBy: { id: 'desc' }, take });
}

export function insertProgramRow(
  tx: Tx,
  row: Pick<Program, 'id' | 'organizationId' | 'brandId' | 'name' | 'gracePeriodSeconds' | 'performanceWindow' | 'createdAt' | 'updatedAt'>,
): Promise<Program> {
  return tx.program.create({ data: row });
}

/** Locks the program's row: changes to one ladder are serialized. */
export async function lockProgram(tx: Tx, id: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM program WHERE id = ${id} FOR UPDATE`;
}

/** The ladder's version, read under a share lock (a ladder change waits for the batch that read it). */
export function tierVersionForShare(tx: Tx, id: string): Promise<{ tier_version: number }[]> {
  return tx.$queryRaw<{ tier_version: number }[]>`SELECT tier_version FROM program WHERE id = ${id} FOR SHARE`;
}

export async function bumpTierVersion(tx: Tx, id: string, at: Date): Promise<void> {
  await tx.program.update({ where: { id }, data: { tierVersion: { increment: 1 }, updatedAt: at } });
}

/** A program's requirements, oldest first. */
export function requirementsOf(db: Reader, programId: string): Promise<ProgramRequirement[]> {
  return db.programRequirement.findMany({ where: { programId }, orderBy: { id: 'asc' } });
}

/** The requirements of the programs, oldest first. */
export function requirementsOfPrograms(db: Reader, programIds: string[]): Promise<ProgramRequirement[]> {
  return db.programRequirement.findMany({ where: { programId: { in: programIds } }, orderBy: { id: 'asc' } });
}

export function requirementOf(
  db: Reader,
  id: string,
  owner: { programId: string } | { organizationId: string },
): Promise<ProgramRequirement | null> {
  return db.programRequirement.findFirst({ where: { id, ...owner } });
}

export function insertRequirementRow(
  tx: Tx,
  row: Pick<ProgramRequirement, 'id' | 'organizationId' | 'programId' | 'metric' | 'operator' | 'threshold' | 'createdAt'>,
): Promise<ProgramRequirement> {
  return tx.programRequirement.create({ data: row });
}

export async function deleteRequirement(tx: Tx, id: string): Promise<void> {
  await tx.programRequirement.delete({ where: { id } });
}

/** A program's ladder, in ladder order (threshold, then id). */
export function ladderOf(db: Reader, programId: string): Promise<ProgramTier[]> {
  return db.programTier.findMany({ where: { programId }, orderBy: [{ threshold: 'asc' }, { id: 'asc' }] });
}

export function tierOf(tx: Tx, programId: string, id: string): Promise<ProgramTier | null> {
  return tx.programTier.findFirst({ where: { id, programId } });
}

export function insertTierRow(tx: Tx, row: Prisma.ProgramTierUncheckedCreateInput): Promise<ProgramTier> {
  return tx.programTier.create({ data: row });
}

export function updateTierRow(tx: Tx, id: string, data: Prisma.ProgramTierUncheckedUpdateInput): Promise<ProgramTier> {
  return tx.programTier.update({ where: { id }, data });
}

export async function deleteTierRow(tx: Tx, id: string): Promise<void> {
  await tx.programTier.delete({ where: { id } });
}
