import {
  DeletedProgramRequirement as DeletedRequirementShape,
  Program as ProgramShape,
  ProgramRequirement as RequirementShape,
  programs,
} from '../../domain/program/program.ts';
import { DeletedProgramTier as DeletedTierShape, ProgramTier as TierShape, TierChange, tiers } from '../../domain/program/tiers.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { objectType } from '../derive.ts';
import { Node } from './node.ts';

/** Programs and requirements of the selected brand; creating either takes program_requirements:write. */
export const ProgramRequirement = objectType('ProgramRequirement', RequirementShape, {
  description: 'One condition of a program: on an assertion claim (assert:<key>) or a measured metric (metric:<key>)',
  interfaces: [Node],
});

const DeletedProgramRequirement = objectType('DeletedProgramRequirement', DeletedRequirementShape, {
  description: 'What deleteProgramRequirement answers',
});

export const Program = objectType('Program', ProgramShape, {
  description: "A brand's program: requirements that enrolled entities must meet",
  interfaces: [Node],
});

connectionAction('programs', programs.list, {
  type: Program,
  description: "The brand's programs, newest first (scope programs:read). Cursors are prog_ ids.",
});

queryAction('program', programs.retrieve, {
  description: 'One program of the brand by prog_ id (scope programs:read)',
  type: Program,
});

queryAction('programRequirements', programs.listRequirements, {
  type: [ProgramRequirement],
  description: "A program's requirements, oldest first (scope program_requirements:read)",
  params: { id: 'program' },
  result: (list) => list.data,
});

mutationAction('createProgram', programs.create, {
  description: 'Create a program in the brand (scope program_requirements:write)',
  type: Program,
});

mutationAction('createProgramRequirement', programs.addRequirement, {
  description: 'Add a requirement to a program of the brand (scope program_requirements:write)',
  type: ProgramRequirement,
  params: { id: 'program' },
});

mutationAction('deleteProgramRequirement', programs.removeRequirement, {
  description: 'Remove a requirement from a program of the brand (scope program_requirements:write)',
  type: DeletedProgramRequirement,
  params: { id: 'program', requirement: 'id' },
});

const ProgramTier = objectType('ProgramTier', TierShape, {
  description:
    "One rung of a program's tier ladder (tier_): reached when the sum of its metric over the program's current period meets its threshold",
});

const DeletedProgramTier = objectType('DeletedProgramTier', DeletedTierShape, { description: 'A removed rung' });

/** A ladder change answers the rung as changed or removed (one zod union): GraphQL names each answer's rung. */
const tierChange = (name: string, description: string, tier: typeof ProgramTier | typeof DeletedProgramTier) => {
  const ref = objectType(name, TierChange, { description, omit: ['tier'] });
  builder.objectFields(ref, (t) => ({ tier: t.field({ type: tier as typeof ProgramTier, resolve: (x) => x.tier as never }) }));
  return ref;
};
const ProgramTierChange = tierChange(
  'ProgramTierChange',
  'What a ladder change answers: the rung, and the program.retier operation applying the ladder',
  ProgramTier,
);
const DeletedProgramTierChange = tierChange(
  'DeletedProgramTierChange',
  'What deleteProgramTier answers: the removed rung, and the program.retier operation applying the ladder',
  DeletedProgramTier,
);

queryAction('programTiers', tiers.list, {
  type: [ProgramTier],
  description: "A program's tier ladder, lowest threshold first (scope program_tiers:read)",
  params: { id: 'program' },
  result: (list) => list.data,
});

mutationAction('createProgramTier', tiers.create, {
  description: 'Add a rung to the ladder; the operation re-evaluates every active enrollment (scope program_tiers:write)',
  type: ProgramTierChange,
  params: { id: 'program' },
});

mutationAction('updateProgramTier', tiers.update, {
  description: 'Change a rung; the operation re-evaluates every active enrollment (scope program_tiers:write)',
  type: ProgramTierChange,
  params: { id: 'program', tier: 'id' },
});

mutationAction('deleteProgramTier', tiers.remove, {
  description: 'Remove a rung; the operation re-evaluates every active enrollment (scope program_tiers:write)',
  type: DeletedProgramTierChange,
  params: { id: 'program', tier: 'id' },
});
