import type { Deps } from '../../src/domain/context.ts';
import { programs } from '../../src/domain/program/program.ts';
import { tiers } from '../../src/domain/program/tiers.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** Programs and their requirements, in the selected brand. */
export function programRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Programs', errors: [400, 401, 403, 404, 409, 429, 503] };
  return [
    actionRoute(deps, programs.create, {
      ...common,
      method: 'POST',
      path: '/programs',
      operationId: 'createProgram',
      summary: 'Create a program with a grace period (seconds, may be 0)',
      description: 'The program',
    }),
    actionRoute(deps, programs.list, {
      ...common,
      method: 'GET',
      path: '/programs',
      operationId: 'listPrograms',
      summary: "The brand's programs, newest first",
      description: 'A page of programs',
    }),
    actionRoute(deps, programs.retrieve, {
      ...common,
      method: 'GET',
      path: '/programs/:id',
      operationId: 'retrieveProgram',
      summary: 'One program with its requirements',
      description: 'The program',
    }),
    actionRoute(deps, programs.addRequirement, {
      ...common,
      method: 'POST',
      path: '/programs/:id/requirements',
      operationId: 'createProgramRequirement',
      summary: "Add a requirement; re-evaluates the program's active enrollments (trigger requirement_change)",
      description: 'The requirement',
    }),
    actionRoute(deps, programs.listRequirements, {
      ...common,
      method: 'GET',
      path: '/programs/:id/requirements',
      operationId: 'listProgramRequirements',
      summary: "A program's requirements, oldest first",
      description: 'Every requirement of the program',
    }),
    actionRoute(deps, programs.removeRequirement, {
      ...common,
      method: 'DELETE',
      path: '/programs/:id/requirements/:requirement',
      operationId: 'deleteProgramRequirement',
      summary: "Remove a requirement; re-evaluates the program's active enrollments (trigger requirement_change)",
      description: 'Deleted',
    }),
    ...tierRoutes(deps),
  ];
}

/** The tier ladder: every change answers 202 with the program.retier operation that applies it to every active enrollment. */
function tierRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Programs', errors: [400, 401, 403, 404, 409, 429, 503] };
  const applies = 'answers 202 with the program.retier operation re-evaluating every active enrollment (trigger tier_change)';
  return [
    actionRoute(deps, tiers.create, {
      ...common,
      method: 'POST',
      path: '/programs/:id/tiers',
      operationId: 'createProgramTier',
      summary: `Add a rung to the tier ladder; ${applies}`,
      description: 'The rung and the retier operation',
    }),
    actionRoute(deps, tiers.list, {
      ...common,
      method: 'GET',
      path: '/programs/:id/tiers',
      operationId: 'listProgramTiers',
      summary: "A program's tier ladder, lowest threshold first",
      description: 'Every rung of the ladder',
    }),
    actionRoute(deps, tiers.update, {
      ...common,
      method: 'POST',
      path: '/programs/:id/tiers/:tier',
      operationId: 'updateProgramTier',
      summary: `Change a rung (name, metric, threshold, rate_bps); ${applies}`,
      description: 'The rung and the retier operation',
    }),
    actionRoute(deps, tiers.remove, {
      ...common,
      method: 'DELETE',
      path: '/programs/:id/tiers/:tier',
      operationId: 'deleteProgramTier',
      summary: `Remove a rung; ${applies}`,
      description: 'The deleted rung and the retier operation',
    }),
  ];
}
