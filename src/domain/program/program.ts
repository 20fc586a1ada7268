import { z } from 'zod';
import type { Program, ProgramRequirement } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { ASSERT_METRIC, evaluateEntityStanding } from '../enrollment/standing.ts';
import type { StoredResponse } from '../idempotency/idempotency.ts';
import { runMutation } from '../platform/mutation.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { parseInput } from '../validation.ts';
import { listLimit } from '../platform/rate-limit.ts';

/**
 * Programs belong to a brand (the one Service-Brand selects) and carry the
 * grace period of their enrollments' standing. Requirements are the
 * qualification rules; changing them re-evaluates every active enrollment.
 */
export const GRACE_PERIOD_MAX_SECONDS = 365 * 24 * 3600;

export const CreateProgramInput = z.strictObject({
  name: z.string().min(1).max(200),
  grace_period_seconds: z.number().int().min(0).max(GRACE_PERIOD_MAX_SECONDS).default(0),
});

export const REQUIREMENT_OPERATORS = ['exists', 'gte', 'lte', 'eq', 'neq'] as const;

export const CreateRequirementInput = z
  .strictObject({
    metric: z.string().regex(ASSERT_METRIC, "must be 'assert:<key>' with key matching ^[a-z][a-z0-9_]{0,63}$"),
    operator: z.enum(REQUIREMENT_OPERATORS),
    threshold: z.number().nullable().optional(),
  })
  .superRefine((r, ctx) => {
    if (r.operator === 'exists' && r.threshold != null) ctx.addIssue({ code: 'custom', path: ['threshold'], message: 'exists takes no threshold' });
    if (r.operator !== 'exists' && r.threshold == null) ctx.addIssue({ code: 'custom', path: ['threshold'], message: `${r.operator} needs a numeric threshold` });
  });

export const ListProgramsInput = z.strictObject({
  limit: listLimit,
  starting_after: z.string().min(1).optional(),
});

export const NoProgramInput = z.strictObject({});

export interface PublicRequirement {
  id: string;
  object: 'program_requirement';
  program: string;
  metric: string;
  operator: (typeof REQUIREMENT_OPERATORS)[number];
  threshold: number | null;
  created_at: string;
}

export interface PublicProgram {
  id: string;
  object: 'program';
  brand: string;
  name: string;
  grace_period_seconds: number;
  requirements: PublicRequirement[];
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

export const presentRequirement = (r: ProgramRequirement): PublicRequirement => ({
  id: r.id,
  object: 'program_requirement',
  program: r.programId,
  metric: r.metric,
  operator: r.operator as PublicRequirement['operator'],
  threshold: r.threshold,
  created_at: r.createdAt.toISOString(),
});

export const presentProgram = (p: Program, requirements: ProgramRequirement[]): PublicProgram => ({
  id: p.id,
  object: 'program',
  brand: p.brandId,
  name: p.name,
  grace_period_seconds: p.gracePeriodSeconds,
  requirements: requirements.map(presentRequirement),
  livemode: true,
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});

type Reader = Tx | Deps['db']['prisma'];

/** A program of the caller's selected brand; anything else (other brand, other organization, bad id) is 404. */
export async function findProgram(db: Reader, caller: SurfaceBCaller, id: string, param: string | null = null): Promise<Program> {
  const row = isId('program', id) ? await db.program.findFirst({ where: { id, organizationId: caller.organization.id, brandId: caller.brand.id } }) : null;
  if (!row) throw missing('program', id, param);
  return row;
}

const requirementsOf = (db: Reader, programId: string) => db.programRequirement.findMany({ where: { programId }, orderBy: { id: 'asc' } });

export async function retrieveProgram(deps: Deps, caller: SurfaceBCaller, id: string): Promise<PublicProgram> {
  const program = await findProgram(deps.db.prisma, caller, id);
  return presentProgram(program, await requirementsOf(deps.db.prisma, program.id));
}

/** Newest first, paged backward by creation time (ids are time-ordered). */
export async function listPrograms(deps: Deps, caller: SurfaceBCaller, raw: unknown) {
  const input = parseInput(ListProgramsInput, raw);
  const db = deps.db.prisma;
  const cursor = input.starting_after ? await findProgram(db, caller, input.starting_after, 'starting_after') : undefined;
  const rows = await db.program.findMany({
    where: { organizationId: caller.organization.id, brandId: caller.brand.id, ...(cursor ? { id: { lt: cursor.id } } : {}) },
    orderBy: { id: 'desc' },
    take: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  const reqs = await db.programRequirement.findMany({ where: { programId: { in: page.map((p) => p.id) } }, orderBy: { id: 'asc' } });
  return {
    object: 'list' as const,
    data: page.map((p) => presentProgram(p, reqs.filter((r) => r.programId === p.id))),
    has_more: rows.length > input.limit,
  };
}

/** Every active enrollment of the program is re-evaluated, entity by entity in id order (a stable lock order). */
async function reevaluateProgram(deps: Deps, tx: Tx, programId: string): Promise<void> {
  const enrollments = await tx.enrollment.findMany({ where: { programId, status: 'active' }, select: { entityId: true }, orderBy: { entityId: 'asc' } });
  for (const { entityId } of enrollments) await evaluateEntityStanding(deps, tx, entityId, { trigger: 'requirement_change' }, { programId });
}

async function createProgram(deps: Deps, tx: Tx, caller: SurfaceBCaller, raw: unknown): Promise<StoredResponse> {
  const input = parseInput(CreateProgramInput, raw);
  const now = deps.clock.now();
  const row = await tx.program.create({
    data: {
      id: newId('program'),
      organizationId: caller.organization.id,
      brandId: caller.brand.id,
      name: input.name,
      gracePeriodSeconds: input.grace_period_seconds,
      createdAt: now,
      updatedAt: now,
    },
  });
  return { status: 201, body: presentProgram(row, []) };
}

async function addRequirement(deps: Deps, tx: Tx, caller: SurfaceBCaller, programId: string, raw: unknown): Promise<StoredResponse> {
  const program = await findProgram(tx, caller, programId);
  const input = parseInput(CreateRequirementInput, raw);
  const row = await tx.programRequirement.create({
    data: {
      id: newId('requirement'),
      organizationId: caller.organization.id,
      programId: program.id,
      metric: input.metric,
      operator: input.operator,
      threshold: input.threshold ?? null,
      createdAt: deps.clock.now(),
    },
  });
  await reevaluateProgram(deps, tx, program.id);
  return { status: 201, body: presentRequirement(row) };
}

async function removeRequirement(deps: Deps, tx: Tx, caller: SurfaceBCaller, programId: string, requirementId: string, raw: unknown): Promise<StoredResponse> {
  parseInput(NoProgramInput, raw);
  const program = await findProgram(tx, caller, programId);
  const row = isId('requirement', requirementId) ? await tx.programRequirement.findFirst({ where: { id: requirementId, programId: program.id } }) : null;
  if (!row) throw missing('program requirement', requirementId);
  await tx.programRequirement.delete({ where: { id: row.id } });
  await reevaluateProgram(deps, tx, program.id);
  return { status: 200, body: { id: row.id, object: 'program_requirement' as const, deleted: true as const } };
}

export type ProgramMutation =
  | { op: 'create'; input: unknown }
  | { op: 'add_requirement'; programId: string; input: unknown }
  | { op: 'remove_requirement'; programId: string; requirementId: string; input: unknown };

export function mutateProgram(deps: Deps, caller: SurfaceBCaller, m: ProgramMutation, idempotencyKey?: string) {
  const target = m.op === 'create' ? undefined : m.op === 'add_requirement' ? m.programId : `${m.programId}/${m.requirementId}`;
  return runMutation(deps, caller, { name: `programs.${m.op}`, target, input: m.input, idempotencyKey }, (tx) => {
    switch (m.op) {
      case 'create':
        return createProgram(deps, tx, caller, m.input);
      case 'add_requirement':
        return addRequirement(deps, tx, caller, m.programId, m.input);
      case 'remove_requirement':
        return removeRequirement(deps, tx, caller, m.programId, m.requirementId, m.input);
    }
  });
}

/** One requirement of a program of the caller's selected brand (404 otherwise). */
export async function retrieveRequirement(deps: Deps, caller: SurfaceBCaller, id: string): Promise<PublicRequirement> {
  const row = isId('requirement', id) ? await deps.db.prisma.programRequirement.findFirst({ where: { id, organizationId: caller.organization.id } }) : null;
  if (!row) throw missing('program requirement', id, null);
  await findProgram(deps.db.prisma, caller, row.programId).catch(() => {
    throw missing('program requirement', id, null);
  });
  return presentRequirement(row);
}

export async function listRequirements(deps: Deps, caller: SurfaceBCaller, programId: string) {
  const program = await findProgram(deps.db.prisma, caller, programId);
  const rows = await requirementsOf(deps.db.prisma, program.id);
  return { object: 'list' as const, data: rows.map(presentRequirement), has_more: false };
}
