import { listPrograms, listRequirements, mutateProgram, retrieveProgram, type PublicProgram, type PublicRequirement } from '../../domain/program/program.ts';
import { builder } from '../builder.ts';
import { given, listConnection } from '../connection.ts';
import { graphqlIdempotencyKey } from '../idempotency.ts';
import { RequirementOperator } from './enums.ts';
import { Node } from './node.ts';

/** Programs and requirements of the selected brand; creating either takes program_requirements:write. */
export const ProgramRequirement = builder.objectRef<PublicRequirement>('ProgramRequirement').implement({
  description: 'One condition of a program on an assertion claim',
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
    requirements: t.field({ type: [ProgramRequirement], resolve: (p) => p.requirements }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

builder.queryField('programs', (t) =>
  t.connection({
    type: Program,
    description: "The brand's programs, newest first (scope programs:read). Cursors are prog_ ids.",
    authScopes: { scope: 'programs:read' },
    resolve: (_r, a, ctx) => listConnection(a, (paging) => listPrograms(ctx.deps, ctx.caller, paging)),
  }),
);

builder.queryField('program', (t) =>
  t.field({
    type: Program,
    description: 'One program of the brand by prog_ id (scope programs:read)',
    authScopes: { scope: 'programs:read' },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => retrieveProgram(ctx.deps, ctx.caller, String(a.id)),
  }),
);

builder.queryField('programRequirements', (t) =>
  t.field({
    type: [ProgramRequirement],
    description: "A program's requirements, oldest first (scope program_requirements:read)",
    authScopes: { scope: 'program_requirements:read' },
    args: { program: t.arg.id({ required: true }) },
    resolve: async (_r, a, ctx) => (await listRequirements(ctx.deps, ctx.caller, String(a.program))).data,
  }),
);

const IDEMPOTENCY_KEY = { description: 'Overrides the Idempotency-Key header' };

builder.mutationField('createProgram', (t) =>
  t.field({
    type: Program,
    description: 'Create a program in the brand (scope program_requirements:write)',
    authScopes: { scope: 'program_requirements:write' },
    args: { name: t.arg.string({ required: true }), gracePeriodSeconds: t.arg.int(), idempotencyKey: t.arg.string(IDEMPOTENCY_KEY) },
    resolve: async (_r, a, ctx, info) => {
      const input = given({ name: a.name, grace_period_seconds: a.gracePeriodSeconds ?? undefined });
      return (await mutateProgram(ctx.deps, ctx.caller, { op: 'create', input }, graphqlIdempotencyKey(ctx, info, a.idempotencyKey))).body as PublicProgram;
    },
  }),
);

builder.mutationField('createProgramRequirement', (t) =>
  t.field({
    type: ProgramRequirement,
    description: 'Add a requirement to a program of the brand (scope program_requirements:write)',
    authScopes: { scope: 'program_requirements:write' },
    args: {
      program: t.arg.id({ required: true }),
      metric: t.arg.string({ required: true }),
      operator: t.arg({ type: RequirementOperator, required: true }),
      threshold: t.arg.float(),
      idempotencyKey: t.arg.string(IDEMPOTENCY_KEY),
    },
    resolve: async (_r, a, ctx, info) => {
      const m = { op: 'add_requirement' as const, programId: String(a.program), input: given({ metric: a.metric, operator: a.operator, threshold: a.threshold }) };
      return (await mutateProgram(ctx.deps, ctx.caller, m, graphqlIdempotencyKey(ctx, info, a.idempotencyKey))).body as PublicRequirement;
    },
  }),
);

builder.mutationField('deleteProgramRequirement', (t) =>
  t.field({
    type: DeletedProgramRequirement,
    description: 'Remove a requirement from a program of the brand (scope program_requirements:write)',
    authScopes: { scope: 'program_requirements:write' },
    args: { program: t.arg.id({ required: true }), id: t.arg.id({ required: true }), idempotencyKey: t.arg.string(IDEMPOTENCY_KEY) },
    resolve: async (_r, a, ctx, info) => {
      const m = { op: 'remove_requirement' as const, programId: String(a.program), requirementId: String(a.id), input: {} };
      return (await mutateProgram(ctx.deps, ctx.caller, m, graphqlIdempotencyKey(ctx, info, a.idempotencyKey))).body as { id: string; deleted: boolean };
    },
  }),
);
