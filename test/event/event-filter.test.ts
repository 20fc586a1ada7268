import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Deps } from '../../src/domain/context.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { GRAPHQL_PARAMS, MAX_FILTER_ENTRIES, parseEventFilter, splitList } from '../../src/domain/event/filter.ts';
import { LEGACY_EVENT_ALIASES, PUBLIC_EVENT_TYPES } from '../../src/domain/event/types.ts';

/**
 * Event filter parsing (src/domain/event/filter.ts) without brands, which is
 * pure: no dependency is touched (brand lookups are covered in test/filters).
 */
const NO_DEPS = {} as Deps;
const parse = (input: Parameters<typeof parseEventFilter>[2], params?: typeof GRAPHQL_PARAMS) =>
  parseEventFilter(NO_DEPS, 'org_x', input, params);

async function refusal(p: Promise<unknown>): Promise<{ code: string; param: string | null }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  const { code, param } = err as DomainError;
  return { code, param };
}

const row = { type: 'payout.created', brandId: 'brand_1', subjectType: 'payout', subjectId: 'po_1' };

describe('parseEventFilter', () => {
  it('no input is every public type of any brand and subject', async () => {
    const f = await parse({});
    expect(f.types).toBeUndefined();
    for (const type of PUBLIC_EVENT_TYPES) expect(f.matches({ ...row, type })).toBe(true);
    expect(f.matches({ ...row, type: 'internal.thing' })).toBe(false);
  });

  it('equal filters have equal keys whatever the order or repetition of entries, and legacy spellings become canonical', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.subarray([...PUBLIC_EVENT_TYPES], { minLength: 1, maxLength: MAX_FILTER_ENTRIES }),
        fc.subarray(['a', 'b', 'c', 'd'], { minLength: 1 }),
        async (types, subjects) => {
          const a = await parse({ types, subject_types: subjects });
          const b = await parse({ types: [...types].reverse().concat(types[0]!), subject_types: [...subjects].reverse() });
          expect(a.key).toBe(b.key);
          expect(a.types).toEqual([...new Set(types)].sort());
        },
      ),
    );
    const [legacy, canonical] = Object.entries(LEGACY_EVENT_ALIASES)[0]!;
    expect((await parse({ types: [legacy] })).types).toEqual([canonical]);
  });

  it('matches an event only when every given dimension matches', async () => {
    const f = await parse({ type: 'payout.created', subject_types: ['payout'], subject_id: 'po_1' });
    expect(f.matches(row)).toBe(true);
    expect(f.matches({ ...row, subjectId: 'po_2' })).toBe(false);
    expect(f.matches({ ...row, subjectType: 'entity' })).toBe(false);
    expect(f.matches({ ...row, type: 'payout.failed' })).toBe(false);
  });

  it('unknown types are invalid_event_type naming the parameter; an empty `types` list means every type', async () => {
    expect(await refusal(parse({ type: 'nope.nothing' }))).toEqual({ code: 'invalid_event_type', param: 'type' });
    expect(await refusal(parse({ types: ['payout.created', 'nope'] }))).toEqual({ code: 'invalid_event_type', param: 'types' });
    expect((await parse({ types: [] })).types).toBeUndefined();
  });

  it('bad list and text values are invalid_request naming the surface’s parameter', async () => {
    const cases: [Parameters<typeof parse>[0], string, string][] = [
      [{ subject_types: [] }, 'subject_types', 'subjectTypes'],
      [{ subject_types: Array.from({ length: MAX_FILTER_ENTRIES + 1 }, (_, i) => `s${i}`) }, 'subject_types', 'subjectTypes'],
      [{ subject_types: [''] }, 'subject_types', 'subjectTypes'],
      [{ subject_types: ['x'.repeat(65)] }, 'subject_types', 'subjectTypes'],
      [{ subject_types: [7 as unknown as string] }, 'subject_types', 'subjectTypes'],
      [{ subject_id: 'a\u0000b' }, 'subject_id', 'subjectId'],
      [{ subject_id: 'x'.repeat(129) }, 'subject_id', 'subjectId'],
      [{ brands: [] }, 'brands', 'brands'],
    ];
    for (const [input, rest, gql] of cases) {
      expect(await refusal(parse(input)), JSON.stringify(input)).toEqual({ code: 'invalid_request', param: rest });
      expect(await refusal(parse(input, GRAPHQL_PARAMS)), JSON.stringify(input)).toEqual({ code: 'invalid_request', param: gql });
    }
  });
});

describe('splitList', () => {
  it('splits one comma-separated REST parameter and leaves anything else alone', () => {
    expect(splitList('a,b')).toEqual(['a', 'b']);
    expect(splitList(['a', 'b'])).toEqual(['a', 'b']);
    expect(splitList(undefined)).toBeUndefined();
  });
});
