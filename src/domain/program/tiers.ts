import { z } from 'zod';
import type { ProgramTier as TierRow } from '../../db/generated/client.ts';
import { Prisma, type Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, isUniqueViolation, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { evaluateEntityStanding } from '../enrollment/standing.ts';
import { capability, mutation, read } from '../action/action.ts';
import { listOf, wholeList } from '../action/list.ts';
import { enqueueOperation, liveOperation, Operation, presentOperation, type PublicOperation } from '../operation/operation.ts';
import type { OperationHandler } from '../operation/engine.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { METRIC_KEY, MEASUREMENT_VALUE_MAX } from '../performance/performance.ts';
import { findProgram } from './program.ts';
import { isoTime } from '../shape.ts';
import {
  bumpTierVersion,
  deleteTierRow,
  insertTierRow,
  ladderOf,
  lockProgram,
  tierOf,
  tierVersionForShare,
  updateTierRow,
} from './store.ts';
import { activeEnrollmentEntitiesAfter } from '../enrollment/store.ts';

/**
 * The tier ladder of a program: rungs `{name, metric, threshold, rate_bps}`.
 * An active enrollment's tier is the highest rung (ladder order: threshold,
 * then id) whose threshold the sum of its metric over the program's current
 * period meets; every evaluation places it (standing.ts `placeOnLadder`).
 * Changing the ladder always answers 202 with a `program.retier` operation
 * that re-evaluates every active enrollment of the program in bounded
 * batches, one transaction each (trigger `tier_change`). Changes are
 * serialized by the program row's lock and move `tier_version`; a retier that
 * sees a newer version than it started from starts over, so the last change
 * is always applied to everyone, and a change made while a retier runs
 * answers that retier.
 */
export const DEFAULT_RETIER_BATCH = 200;
export const RATE_BPS_MAX = 1_000_000;

const name = z.string().min(1).max(200);
const metric = z.string().regex(METRIC_KEY, 'must be a metric key matching ^[a-z][a-z0-9_]{0,63}$');
const threshold = z.number().min(0).max(MEASUREMENT_VALUE_MAX);
const rateBps = z.number().int().min(0).max(RATE_BPS_MAX).describe('basis points of the measured value earned: 100 = 1 %');

export const CreateTierInput = z.strictObject({ name, metric, threshold, rate_bps: rateBps });
export const UpdateTierInput = z
  .strictObject({ name: name.optional(), metric: metric.optional(), threshold: threshold.optional(), rate_bps: rateBps.optional() })
  .refine((u) => Object.keys(u).length > 0, 'give at least one of name, metric, threshold, rate_bps');
export const NoTierInput = z.strictObject({});

export const ProgramTier = z.object({
  id: z.string().describe('prefix tier_'),
  object: z.literal('program_tier'),
  program: z.string(),
  name: z.string(),
  metric: z.string().describe('a metric key: the sum of its measurements over the program’s current period'),
  threshold: z.number(),
  rate_bps: z.number().int(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type PublicTier = z.output<typeof ProgramTier>;
export const DeletedProgramTier = z.object({ id: z.string(), object: z.literal('program_tier'), deleted: z.literal(true) });

/** What a ladder change answers (202): the rung as changed, and the retier operation applying the ladder. */
export const TierChange = z.object({ tier: z.union([ProgramTier, DeletedProgramTier]), operation: Operation });
export type PublicTierChange = { tier: PublicTier | z.output<typeof DeletedProgramTier>; operation: PublicOperation };

const presentTier = (t: TierRow): PublicTier => ({
  id: t.id,
  object: 'program_tier',
  program: t.programId,
  name: t.name,
  metric: t.metric,
  threshold: Number(t.threshold),
  rate_bps: t.rateBps,
  created_at: t.createdAt.toISOString(),
  updated_at: t.updatedAt.toISOString(),
});

/** A rung of the program's ladder; another program's (or a bad id) is 404. */
async function findTier(tx: Tx, programId: string, id: string): Promise<TierRow> {
  const row = isId('tier', id) ? await tierOf(tx, programId, id) : null;
  if (!row) throw missing('program tier', id);
  return row;
}

const rungTaken = () => new DomainError('resource_conflict', 'The ladder already has a rung on this metric at this threshold', 'threshold');

/**
 * Runs one ladder change under the program's row lock (changes to one ladder are serialized), moves the
 * version, and answers the live retier or a new one.
 */
async function changeLadder<T extends PublicTierChange['tier']>(
  deps: Deps,
  tx: Tx,
  caller: SurfaceBCaller,
  programId: string,
  change: (programId: string) => Promise<T>,
): Promise<PublicTierChange> {
  const program = await findProgram(tx, caller, programId);
  await lockProgram(tx, program.id);
  let tier: T;
  try {
    tier = await change(program.id);
  } catch (e) {
    if (isUniqueViolation(e)) throw rungTaken();
    throw e;
  }
  await bumpTierVersion(tx, program.id, deps.clock.now());
  const subject = { type: 'program', id: program.id };
  const live = await liveOperation(tx, subject);
  const op =
    live ??
    (await enqueueOperation(deps, tx, {
      organizationId: program.organizationId,
      brandId: program.brandId,
      subject,
      kind: 'program.retier',
      progress: { evaluated: 0 },
    }));
  return { tier, operation: presentOperation(op) };
}

interface RetierProgress {
  version?: number;
  after?: string;
  evaluated: number;
  batches?: number;
  restarts?: number;
}

/**
 * program.retier: re-evaluates the program's active enrollments, entity by entity in id order, PROGRAM_RETIER_BATCH
 * per transaction (each under the entity's lock, trigger `tier_change`). The last batch settles it under the program's
 * lock if the ladder is still the version it applied; a newer version starts it over.
 */
const retier: OperationHandler = {
  kind: 'program.retier',
  async step(ctx) {
    const { deps } = ctx;
    const batch = deps.config.operations.retierBatch ?? DEFAULT_RETIER_BATCH;
    return ctx.commit(async (tx) => {
      const programId = ctx.op.subjectId;
      const [program] = await tierVersionForShare(tx, programId);
      if (!program) return { status: 'failed', error: { code: 'resource_missing', message: 'The program no longer exists' } };
      const was = ctx.op.progress as unknown as RetierProgress;
      const restart = was.version !== undefined && was.version !== program.tier_version;
      const p: RetierProgress =
        was.version === program.tier_version
          ? was
          : { version: program.tier_version, evaluated: 0, batches: 0, restarts: (was.restarts ?? 0) + (restart ? 1 : 0) };
      const entities = await activeEnrollmentEntitiesAfter(tx, programId, p.after ?? '', batch);
      for (const { entity_id } of entities) await evaluateEntityStanding(deps, tx, entity_id, { trigger: 'tier_change' }, { programId });
      const progress = {
        ...p,
        after: entities.at(-1)?.entity_id ?? p.after,
        evaluated: p.evaluated + entities.length,
        batches: (p.batches ?? 0) + 1,
      };
      if (entities.length === batch) return { status: 'continue', progress };
      return { status: 'succeeded', progress, result: { evaluated: progress.evaluated, tier_version: p.version } };
    });
  },
};

export const tierHandlers: OperationHandler[] = [retier];

/** The tier actions (src/domain/action/action.ts). */
export const tiers = capability({ name: 'programs', title: 'Programs', resource: 'program_tiers' })({
  create: mutation({
    name: 'programs.create_tier',
    summary:
      'Add a rung to the tier ladder; answers the program.retier operation re-evaluating every active enrollment (trigger tier_change)',
    params: ['id'],
    input: CreateTierInput,
    output: TierChange,
    outcome: 'accepted',
    run: ({ deps, caller, params, input, db }) =>
      changeLadder(deps, db, caller, params.id, async (programId) => {
        const now = deps.clock.now();
        const row = await insertTierRow(db, {
          id: newId('tier'),
          organizationId: caller.organization.id,
          programId,
          name: input.name,
          metric: input.metric,
          threshold: new Prisma.Decimal(input.threshold),
          rateBps: input.rate_bps,
          createdAt: now,
          updatedAt: now,
        });
        return presentTier(row);
      }),
  }),
  list: read({
    name: 'programs.list_tiers',
    summary: "A program's tier ladder, lowest threshold first",
    params: ['id'],
    input: NoTierInput,
    output: listOf(ProgramTier),
    run: async ({ caller, params, db }) => {
      const program = await findProgram(db, caller, params.id);
      return wholeList((await ladderOf(db, program.id)).map(presentTier));
    },
  }),
  update: mutation({
    name: 'programs.update_tier',
    summary:
      'Change a rung (name, metric, threshold, rate_bps); answers the program.retier operation re-evaluating every active enrollment (trigger tier_change)',
    params: ['id', 'tier'],
    input: UpdateTierInput,
    output: TierChange,
    outcome: 'accepted',
    run: ({ deps, caller, params, input, db }) =>
      changeLadder(deps, db, caller, params.id, async (programId) => {
        const row = await findTier(db, programId, params.tier);
        const updated = await updateTierRow(db, row.id, {
          name: input.name,
          metric: input.metric,
          threshold: input.threshold === undefined ? undefined : new Prisma.Decimal(input.threshold),
          rateBps: input.rate_bps,
          updatedAt: deps.clock.now(),
        });
        return presentTier(updated);
      }),
  }),
  remove: mutation({
    name: 'programs.delete_tier',
    summary: 'Remove a rung; answers the program.retier operation re-evaluating every active enrollment (trigger tier_change)',
    params: ['id', 'tier'],
    input: NoTierInput,
    output: TierChange,
    outcome: 'accepted',
    run: ({ deps, caller, params, db }) =>
      changeLadder(deps, db, caller, params.id, async (programId) => {
        const row = await findTier(db, programId, params.tier);
        await deleteTierRow(db, row.id);
        return { id: row.id, object: 'program_tier' as const, deleted: true as const };
      }),
  }),
});
