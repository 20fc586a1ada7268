import { z } from 'zod';
import type { Program as ProgramRow, ProgramRequirement as RequirementRow } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { REQUIREMENT_METRIC, evaluateEntityStanding } from '../enrollment/standing.ts';
import { capability, mutation, read, type Reader } from '../action/action.ts';
import { ListInput, listOf, newestFirst, wholeList } from '../action/list.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { isoTime } from '../shape.ts';
import {
  deleteRequirement,
  insertProgramRow,
  insertRequirementRow,
  programOfBrand,
  programsPage,
  requirementOf,
  requirementsOf,
  requirementsOfPrograms,
} from './store.ts';
import { activeEnrollmentEntities } from '../enrollment/store.ts';

/**
 * Programs belong to a brand (the one Service-Brand selects) and carry the
 * grace period of their enrollments' standing. Requirements are the
 * qualification rules; changing them re-evaluates every active enrollment.
 */
export const GRACE_PERIOD_MAX_SECONDS = 365 * 24 * 3600;

/** The UTC period a `metric:<key>` requirement sums its measurements over (weeks start on Monday, as in ISO 8601). */
export const PERFORMANCE_WINDOWS = ['day', 'week', 'month'] as const;

export const CreateProgramInput = z.strictObject({
  name: z.string().min(1).max(200),
  grace_period_seconds: z.number().int().min(0).max(GRACE_PERIOD_MAX_SECONDS).default(0),
  performance_window: z
    .enum(PERFORMANCE_WINDOWS)
    .default('month')
    .describe('the UTC period metric:<key> requirements sum over (weeks start Monday); default month'),
});

export const REQUIREMENT_OPERATORS = ['exists', 'gte', 'lte', 'eq', 'neq'] as const;

export const CreateRequirementInput = z
  .strictObject({
    metric: z.string().regex(REQUIREMENT_METRIC, "must be 'assert:<key>' or 'metric:<key>' with key matching ^[a-z][a-z0-9_]{0,63}$"),
    operator: z.enum(REQUIREMENT_OPERATORS),
    threshold: z.number().nullable().optional(),
  })
  .superRefine((r, ctx) => {
    if (r.operator === 'exists' && r.threshold != null)
      ctx.addIssue({ code: 'custom', path: ['threshold'], message: 'exists takes no threshold' });
    if (r.operator !== 'exists' && r.threshold == null)
      ctx.addIssue({ code: 'custom', path: ['threshold'], message: `${r.operator} needs a numeric threshold` });
  });

export const NoProgramInput = z.strictObject({});

export const ProgramRequirement = z.object({
  id: z.string().describe('prefix req_'),
  object: z.literal('program_requirement'),
  program: z.string(),
  metric: z.string().describe("'assert:<key>' (a claim) or 'metric:<key>' (a measured metric summed over the program's current period)"),
  operator: z.enum(REQUIREMENT_OPERATORS),
  threshold: z.number().nullable(),
  created_at: isoTime,
});
export type PublicRequirement = z.output<typeof ProgramRequirement>;
export const DeletedProgramRequirement = z.object({ id: z.string(), object: z.literal('program_requirement'), deleted: z.literal(true) });

export const Program = z.object({
  id: z.string().describe('prefix prog_'),
  object: z.literal('program'),
  brand: z.string(),
  name: z.string(),
  grace_period_seconds: z.number().int(),
  performance_window: z.enum(PERFORMANCE_WINDOWS),
  requirements: z.array(ProgramRequirement),
  livemode: z.boolean(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type PublicProgram = z.output<typeof Program>;

export const presentRequirement = (r: RequirementRow): PublicRequirement => ({
  id: r.id,
  object: 'program_requirement',
  program: r.programId,
  metric: r.metric,
  operator: r.operator as PublicRequirement['operator'],
  threshold: r.threshold,
  created_at: r.createdAt.toISOString(),
});

export const presentProgram = (p: ProgramRow, requirements: RequirementRow[]): PublicProgram => ({
  id: p.id,
  object: 'program',
  brand: p.brandId,
  name: p.name,
  grace_period_seconds: p.gracePeriodSeconds,
  performance_window: p.performanceWindow as PublicProgram['performance_window'],
  requirements: requirements.map(presentRequirement),
  livemode: true,
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});

/** A program of the caller's selected brand; anything else (other brand, other organization, bad id) is 404. */
export async function findProgram(db: Reader, caller: SurfaceBCaller, id: string, param: string | null = null): Promise<ProgramRow> {
  const row = isId('program', id) ? await programOfBrand(db, caller.organization.id, caller.brand.id, id) : null;
  if (!row) throw missing('program', id, param);
  return row;
}

/** Every active enrollment of the program is re-evaluated, entity by entity in id order (a stable lock order). */
async function reevaluateProgram(deps: Deps, tx: Tx, programId: string): Promise<void> {
  const enrollments = await activeEnrollmentEntities(tx, programId);
  for (const { entityId } of enrollments)
    await evaluateEntityStanding(deps, tx, entityId, { trigger: 'requirement_change' }, { programId });
}

async function createProgram(
  deps: Deps,
  tx: Tx,
  caller: SurfaceBCaller,
  input: z.output<typeof CreateProgramInput>,
): Promise<PublicProgram> {
  const now = deps.clock.now();
  const row = await insertProgramRow(tx, {
    id: newId('program'),
    organizationId: caller.organization.id,
    brandId: caller.brand.id,
    name: input.name,
    gracePeriodSeconds: input.grace_period_seconds,
    performanceWindow: input.performance_window,
    createdAt: now,
    updatedAt: now,
  });
  return presentProgram(row, []);
}

async function addRequirement(
  deps: Deps,
  tx: Tx,
  caller: SurfaceBCaller,
  programId: string,
  input: z.output<typeof CreateRequirementInput>,
): Promise<PublicRequirement> {
  const program = await findProgram(tx, caller, programId);
  const row = await insertRequirementRow(tx, {
    id: newId('requirement'),
    organizationId: caller.organization.id,
    programId: program.id,
    metric: input.metric,
    operator: input.operator,
    threshold: input.threshold ?? null,
    createdAt: deps.clock.now(),
  });
  await reevaluateProgram(deps, tx, program.id);
  return presentRequirement(row);
}

async function removeRequirement(deps: Deps, tx: Tx, caller: SurfaceBCaller, programId: string, requirementId: string) {
  const program = await findProgram(tx, caller, programId);
  const row = isId('requirement', requirementId) ? await requirementOf(tx, requirementId, { programId: program.id }) : null;
  if (!row) throw missing('program requirement', requirementId);
  await deleteRequirement(tx, row.id);
  await reevaluateProgram(deps, tx, program.id);
  return { id: row.id, object: 'program_requirement' as const, deleted: true as const };
}

/**
 * The program actions (src/domain/action/action.ts). The catalogue has no
 * `programs:write`: defining a program is defining qualification rules, so
 * creating one takes `program_requirements:write`.
 */
export const programs = capability({
  name: 'programs',
  title: 'Programs',
  scopes: { read: 'programs:read', write: 'program_requirements:write' },
})({
  create: mutation({
    summary: 'Create a program with a grace period (seconds, may be 0)',
    input: CreateProgramInput,
    output: Program,
    outcome: 'created',
    run: ({ deps, caller, input, db }) => createProgram(deps, db, caller, input),
  }),
  /** Newest first, paged backward by creation time (ids are time-ordered). */
  list: read({
    summary: "The brand's programs, newest first",
    input: ListInput,
    output: listOf(Program),
    run: async ({ caller, input, db }) => {
      const page = await newestFirst(
        input,
        (id, param) => findProgram(db, caller, id, param),
        (below, take) => programsPage(db, caller.organization.id, caller.brand.id, below, take),
      );
      const reqs = await requirementsOfPrograms(
        db,
        page.data.map((p) => p.id),
      );
      return {
        ...page,
        data: page.data.map((p) =>
          presentProgram(
            p,
            reqs.filter((r) => r.programId === p.id),
          ),
        ),
      };
    },
  }),
  retrieve: read({
    summary: 'One program with its requirements',
    params: ['id'],
    retrieves: 'program',
    input: NoProgramInput,
    output: Program,
    run: async ({ caller, params, db }) => {
      const program = await findProgram(db, caller, params.id);
      return presentProgram(program, await requirementsOf(db, program.id));
    },
  }),
  addRequirement: mutation({
    summary: "Add a requirement; re-evaluates the program's active enrollments (trigger requirement_change)",
    params: ['id'],
    input: CreateRequirementInput,
    output: ProgramRequirement,
    outcome: 'created',
    run: ({ deps, caller, params, input, db }) => addRequirement(deps, db, caller, params.id, input),
  }),
  listRequirements: read({
    summary: "A program's requirements, oldest first",
    scope: 'program_requirements:read',
    params: ['id'],
    input: NoProgramInput,
    output: listOf(ProgramRequirement),
    run: async ({ caller, params, db }) => {
      const program = await findProgram(db, caller, params.id);
      return wholeList((await requirementsOf(db, program.id)).map(presentRequirement));
    },
  }),
  removeRequirement: mutation({
    summary: "Remove a requirement; re-evaluates the program's active enrollments (trigger requirement_change)",
    params: ['id', 'requirement'],
    input: NoProgramInput,
    output: DeletedProgramRequirement,
    outcome: 'ok',
    run: ({ deps, caller, params, db }) => removeRequirement(deps, db, caller, params.id, params.requirement),
  }),
});

/** One requirement of a program of the caller's selected brand (404 otherwise). */
export async function retrieveRequirement(deps: Deps, caller: SurfaceBCaller, id: string): Promise<PublicRequirement> {
  const row = isId('requirement', id) ? await requirementOf(deps.db.prisma, id, { organizationId: caller.organization.id }) : null;
  if (!row) throw missing('program requirement', id, null);
  await findProgram(deps.db.prisma, caller, row.programId).catch(() => {
    throw missing('program requirement', id, null);
  });
  return presentRequirement(row);
}
