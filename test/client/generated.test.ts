import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf } from 'vitest';
import * as generated from '../../packages/client/src/generated/resources.ts';
import { PlatformClient, type DeletedProgramTier, type ProgramTier, type ProgramTierChange } from '../../packages/client/src/index.ts';
import { clientMethods, generatedFiles } from '../../scripts/generate-client.ts';
import { ACTIONS } from '../../src/domain/registry.ts';
import { appTest, buildTenant } from '../support/kit.ts';

/**
 * The client's methods and types are generated from the registry's schemas and REST's bindings
 * (scripts/generate-client.ts, `npm run client:generate`): the committed files are what the generator makes, and the
 * client carries every action REST carries.
 */
const test = appTest();

describe('the generated client', () => {
  test('generated/types.ts, generated/resources.ts and event-data.ts are what npm run client:generate writes', () => {
    for (const [file, text] of Object.entries(generatedFiles())) expect(readFileSync(file, 'utf8'), file).toBe(text);
  });

  test('every action on the REST front has one method, on a resource PlatformClient exposes (public, or shaped by a subclass)', () => {
    const methods = clientMethods();
    expect(methods.map((m) => m.action).sort()).toEqual(
      ACTIONS.filter((a) => a.fronts.includes('rest'))
        .map((a) => a.name)
        .sort(),
    );
    const client = new PlatformClient({ apiKey: 'sk_x_live_y', origin: 'http://127.0.0.1:1' });
    const resources = Object.values(client);
    const classes = new Map<string, unknown>(Object.entries(generated));
    for (const m of methods) {
      const Class = classes.get(m.resource) as abstract new (...args: never[]) => unknown;
      const instance = resources.find((r) => r instanceof Class) as Record<string, unknown> | undefined;
      expect(instance, `${m.action}: PlatformClient has no ${m.resource}`).toBeDefined();
      expect(typeof instance![m.method], `${m.action}: ${m.resource}.${m.method}`).toBe('function');
    }
  });

  test('a tier change is typed by what it carries: the rung, or its deletion (checked by tsc)', () => {
    type Tiers = PlatformClient['programTiers'];
    expectTypeOf<Awaited<ReturnType<Tiers['create']>>>().toEqualTypeOf<ProgramTierChange<ProgramTier>>();
    expectTypeOf<Awaited<ReturnType<Tiers['delete']>>['tier']>().toEqualTypeOf<DeletedProgramTier>();
  });

  test('programs and enrollments through the client: create, requirements, enroll, approve, list and retrieve', async ({ app: t }) => {
    const { token } = await buildTenant(t, [
      'programs:read',
      'program_requirements:read',
      'program_requirements:write',
      'enrollments:read',
      'enrollments:write',
    ]);
    const client = new PlatformClient({ apiKey: token, origin: t.origin });
    const program = await client.programs.create({ name: 'Sellers', performanceWindow: 'week' });
    expect(program).toMatchObject({
      object: 'program',
      name: 'Sellers',
      performanceWindow: 'week',
      gracePeriodSeconds: 0,
      requirements: [],
    });
    const requirement = await client.programs.addRequirement(program.id, { metric: 'assert:verified', operator: 'exists' });
    expect(requirement).toMatchObject({ object: 'program_requirement', program: program.id, metric: 'assert:verified', threshold: null });
    expect((await client.programs.listRequirements(program.id)).data.map((r) => r.id)).toEqual([requirement.id]);
    expect((await client.programs.retrieve(program.id)).requirements.map((r) => r.id)).toEqual([requirement.id]);
    const listed = [];
    for await (const p of client.programs.list({ limit: 1 })) listed.push(p.id);
    expect(listed).toEqual([program.id]);

    const enrollment = await client.enrollments.create({ program: program.id, externalUserId: 'seller-1', issuer: 'acme' });
    expect(enrollment).toMatchObject({ object: 'enrollment', program: program.id, status: 'pending', standing: 'not_qualified' });
    expect(await client.enrollments.approve(enrollment.id)).toMatchObject({ id: enrollment.id, status: 'approved' });
    expect((await client.enrollments.retrieve(enrollment.id)).status).toBe('approved');
    expect((await client.enrollments.list({ program: program.id, status: 'approved' })).data.map((e) => e.id)).toEqual([enrollment.id]);

    expect(await client.programs.removeRequirement(program.id, requirement.id)).toEqual({
      id: requirement.id,
      object: 'program_requirement',
      deleted: true,
    });
    expect((await client.programs.listRequirements(program.id)).data).toEqual([]);
  });
});
