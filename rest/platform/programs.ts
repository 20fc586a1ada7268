import type { Deps } from '../../src/domain/context.ts';
import {
  CreateProgramInput,
  CreateRequirementInput,
  ListProgramsInput,
  NoProgramInput,
  listPrograms,
  listRequirements,
  mutateProgram,
  retrieveProgram,
} from '../../src/domain/program/program.ts';
import type { RouteDef } from '../http/route.ts';
import { answerMutation, answerRetrieve } from './answer.ts';
import { callerWith, platformQuery } from './pipeline.ts';
import { DeletedProgramRequirement, Program, ProgramList, ProgramRequirement, ProgramRequirementList } from './standing-schemas.ts';

/**
 * Programs and their requirements, in the selected brand. The catalogue has
 * no `programs:write`: defining a program is defining qualification rules,
 * so creating one takes `program_requirements:write`.
 */
export function programRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Programs', auth: 'platform' as const, errors: [400, 401, 403, 404, 409, 429, 503] };
  const write = 'program_requirements:write';
  return [
    {
      ...common,
      method: 'POST',
      path: '/programs',
      operationId: 'createProgram',
      summary: 'Create a program with a grace period (seconds, may be 0)',
      scope: write,
      body: CreateProgramInput,
      idempotent: true,
      success: { status: 201, description: 'The program', schema: Program },
      handler: (ctx) => answerMutation(deps, ctx, write, (caller, input, key) => mutateProgram(deps, caller, { op: 'create', input }, key)),
    },
    {
      ...common,
      method: 'GET',
      path: '/programs',
      operationId: 'listPrograms',
      summary: "The brand's programs, newest first",
      scope: 'programs:read',
      query: ListProgramsInput,
      success: { status: 200, description: 'A page of programs', schema: ProgramList },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'programs:read');
        ctx.body = await listPrograms(deps, caller, platformQuery(ctx));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/programs/:id',
      operationId: 'retrieveProgram',
      summary: 'One program with its requirements',
      scope: 'programs:read',
      query: NoProgramInput,
      success: { status: 200, description: 'The program', schema: Program },
      handler: (ctx) => answerRetrieve(ctx, 'programs:read', (caller) => retrieveProgram(deps, caller, ctx.params.id!)),
    },
    {
      ...common,
      method: 'POST',
      path: '/programs/:id/requirements',
      operationId: 'createProgramRequirement',
      summary: "Add a requirement; re-evaluates the program's active enrollments (trigger requirement_change)",
      scope: write,
      body: CreateRequirementInput,
      idempotent: true,
      success: { status: 201, description: 'The requirement', schema: ProgramRequirement },
      handler: (ctx) =>
        answerMutation(deps, ctx, write, (caller, input, key) => mutateProgram(deps, caller, { op: 'add_requirement', programId: ctx.params.id!, input }, key)),
    },
    {
      ...common,
      method: 'GET',
      path: '/programs/:id/requirements',
      operationId: 'listProgramRequirements',
      summary: "A program's requirements, oldest first",
      scope: 'program_requirements:read',
      query: NoProgramInput,
      success: { status: 200, description: 'Every requirement of the program', schema: ProgramRequirementList },
      handler: (ctx) => answerRetrieve(ctx, 'program_requirements:read', (caller) => listRequirements(deps, caller, ctx.params.id!)),
    },
    {
      ...common,
      method: 'DELETE',
      path: '/programs/:id/requirements/:requirement',
      operationId: 'deleteProgramRequirement',
      summary: "Remove a requirement; re-evaluates the program's active enrollments (trigger requirement_change)",
      scope: write,
      idempotent: true,
      success: { status: 200, description: 'Deleted', schema: DeletedProgramRequirement },
      handler: (ctx) =>
        answerMutation(deps, ctx, write, (caller, input, key) =>
          mutateProgram(deps, caller, { op: 'remove_requirement', programId: ctx.params.id!, requirementId: ctx.params.requirement!, input }, key),
        ),
    },
  ];
}
