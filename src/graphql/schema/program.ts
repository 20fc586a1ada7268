import { programs, type PublicProgram, type PublicRequirement } from '../../domain/program/program.ts';
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
