import { programs, type PublicProgram, type PublicRequirement } from '../../domain/program/program.ts';
import { tiers, type PublicTier } from '../../domain/program/tiers.ts';
import type { PublicOperation } from '../../domain/operation/operation.ts';
import { Operation } from './operation.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { given } from '../connection.ts';
import { PerformanceWindow, RequirementOperator } from './enums.ts';
import { Node } from './node.ts';

/** Programs and requirements of the selected brand; creating either takes program_requirements:write. */
export const ProgramRequirement = builder.objectRef<PublicRequirement>('ProgramRequirement').implement({
  description: 'One condition of a program: on an assertion claim (assert:<key>) or a measured metric (metric:<key>)',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    program: t.exposeString('program'),
    metric: t.exposeString('metric', { description: 'assert:<key>' }),
    operator: t.field({ type: RequirementOperator, resolve: (r) => r.operator }),
    threshold: t.exposeFloat('threshold', { nullable: true }),
    createdAt: t.exposeString('created_at'),
  }),
});

const DeletedProgramRequirement = builder.objectRef<{ id: string; deleted: boolean }>('DeletedProgramRequirement').implement({
  description: 'What deleteProgramRequirement answers',
  fields: (t) => ({ id: t.exposeID('id'), deleted: t.exposeBoolean('deleted') }),
});

export const Program = builder.objectRef<PublicProgram>('Program').implement({
  description: "A brand's program: requirements that enrolled entities must meet",
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    brand: t.exposeString('brand'),
    name: t.exposeString('name'),
    gracePeriodSeconds: t.exposeInt('grace_period_seconds'),
    performanceWindow: t.expose('performance_window', {
      type: PerformanceWindow,
      description: 'The UTC period metric:<key> requirements sum their measurements over',
    }),
    requirements: t.field({ type: [ProgramRequirement], resolve: (p) => p.requirements }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

connectionAction('programs', programs.list, {
  type: Program,
  description: "The brand's programs, newest first (scope programs:read). Cursors are prog_ ids.",
  input: () => ({}),
});

queryAction('program', programs.retrieve, {
  description: 'One program of the brand by prog_ id (scope programs:read)',
  type: Program,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
});

queryAction('programRequirements', programs.listRequirements, {
  type: [ProgramRequirement],
  description: "A program's requirements, oldest first (scope program_requirements:read)",
  args: (arg) => ({ program: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.program) } }),
  result: (list) => list.data,
});

mutationAction('createProgram', programs.create, {
  description: 'Create a program in the brand (scope program_requirements:write)',
  type: Program,
  args: (arg) => ({
    name: arg.string({ required: true }),
    gracePeriodSeconds: arg.int(),
    performanceWindow: arg({ type: PerformanceWindow, description: 'default MONTH' }),
  }),
  input: (a) => ({
    input: given({
      name: a.name,
      grace_period_seconds: a.gracePeriodSeconds ?? undefined,
      performance_window: a.performanceWindow ?? undefined,
    }),
  }),
});

mutationAction('createProgramRequirement', programs.addRequirement, {
  description: 'Add a requirement to a program of the brand (scope program_requirements:write)',
  type: ProgramRequirement,
  args: (arg) => ({
    program: arg.id({ required: true }),
    metric: arg.string({ required: true }),
    operator: arg({ type: RequirementOperator, required: true }),
    threshold: arg.float(),
  }),
  input: (a) => ({ params: { id: String(a.program) }, input: given({ metric: a.metric, operator: a.operator, threshold: a.threshold }) }),
});

mutationAction('deleteProgramRequirement', programs.removeRequirement, {
  description: 'Remove a requirement from a program of the brand (scope program_requirements:write)',
  type: DeletedProgramRequirement,
  args: (arg) => ({ program: arg.id({ required: true }), id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.program), requirement: String(a.id) }, input: {} }),
});

const ProgramTier = builder.objectRef<PublicTier>('ProgramTier').implement({
  description:
    "One rung of a program's tier ladder (tier_): reached when the sum of its metric over the program's current period meets its threshold",
  fields: (t) => ({
    id: t.exposeID('id'),
    program: t.exposeString('program'),
    name: t.exposeString('name'),
    metric: t.exposeString('metric'),
    threshold: t.exposeFloat('threshold'),
    rateBps: t.exposeInt('rate_bps'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

const ProgramTierChange = builder.objectRef<{ tier: PublicTier; operation: PublicOperation }>('ProgramTierChange').implement({
  description: 'What a ladder change answers: the rung, and the program.retier operation applying the ladder',
  fields: (t) => ({
    tier: t.field({ type: ProgramTier, resolve: (x) => x.tier }),
    operation: t.field({ type: Operation, resolve: (x) => x.operation }),
  }),
});

const DeletedProgramTier = builder.objectRef<{ id: string; deleted: boolean }>('DeletedProgramTier').implement({
  description: 'A removed rung',
  fields: (t) => ({ id: t.exposeID('id'), deleted: t.exposeBoolean('deleted') }),
});

const DeletedProgramTierChange = builder
  .objectRef<{ tier: { id: string; deleted: boolean }; operation: PublicOperation }>('DeletedProgramTierChange')
  .implement({
    description: 'What deleteProgramTier answers: the removed rung, and the program.retier operation applying the ladder',
    fields: (t) => ({
      tier: t.field({ type: DeletedProgramTier, resolve: (x) => x.tier }),
      operation: t.field({ type: Operation, resolve: (x) => x.operation }),
    }),
  });

queryAction('programTiers', tiers.list, {
  type: [ProgramTier],
  description: "A program's tier ladder, lowest threshold first (scope program_tiers:read)",
  args: (arg) => ({ program: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.program) } }),
  result: (list) => list.data,
});

mutationAction('createProgramTier', tiers.create, {
  description: 'Add a rung to the ladder; the operation re-evaluates every active enrollment (scope program_tiers:write)',
  type: ProgramTierChange,
  args: (arg) => ({
    program: arg.id({ required: true }),
    name: arg.string({ required: true }),
    metric: arg.string({ required: true }),
    threshold: arg.float({ required: true }),
    rateBps: arg.int({ required: true }),
  }),
  input: (a) => ({
    params: { id: String(a.program) },
    input: { name: a.name, metric: a.metric, threshold: a.threshold, rate_bps: a.rateBps },
  }),
});

mutationAction('updateProgramTier', tiers.update, {
  description: 'Change a rung; the operation re-evaluates every active enrollment (scope program_tiers:write)',
  type: ProgramTierChange,
  args: (arg) => ({
    program: arg.id({ required: true }),
    id: arg.id({ required: true }),
    name: arg.string(),
    metric: arg.string(),
    threshold: arg.float(),
    rateBps: arg.int(),
  }),
  input: (a) => ({
    params: { id: String(a.program), tier: String(a.id) },
    input: given({
      name: a.name ?? undefined,
      metric: a.metric ?? undefined,
      threshold: a.threshold ?? undefined,
      rate_bps: a.rateBps ?? undefined,
    }),
  }),
});

mutationAction('deleteProgramTier', tiers.remove, {
  description: 'Remove a rung; the operation re-evaluates every active enrollment (scope program_tiers:write)',
  type: DeletedProgramTierChange,
  args: (arg) => ({ program: arg.id({ required: true }), id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.program), tier: String(a.id) }, input: {} }),
});
