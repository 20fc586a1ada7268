import type { GraphQLObjectType, GraphQLSchema, GraphQLField } from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isoTime } from '../../src/domain/shape.ts';
import { builder } from '../../src/graphql/builder.ts';
import { argsOf, camel, enumFor, inputType, objectType } from '../../src/graphql/derive.ts';

/**
 * The one derivation of GraphQL shapes from zod (src/graphql/derive.ts), on a
 * builder of its own file: each row is a zod field and the GraphQL type,
 * description or invocation it must give.
 */
const COLORS = ['light_blue', 'dark_red'] as const;
enumFor(COLORS, builder.enumType('Color', { values: { LIGHT_BLUE: { value: 'light_blue' }, DARK_RED: { value: 'dark_red' } } }));

const Nested = z.object({ label: z.string() });
const OUTPUTS: [key: string, schema: z.ZodType, graphql: string, description?: string][] = [
  ['id', z.string().describe('prefix x_'), 'ID!', 'prefix x_'],
  ['other_id', z.string(), 'String!'],
  ['created_at', isoTime, 'DateTime!'],
  ['ended_at', isoTime.nullable().describe('null while running'), 'DateTime', 'null while running'],
  ['count', z.number().int(), 'Int!'],
  ['ratio', z.number(), 'Float!'],
  ['on', z.boolean(), 'Boolean!'],
  ['deleted', z.literal(true), 'Boolean!'],
  ['color', z.enum(COLORS), 'Color!'],
  ['algorithm', z.enum(['HS256', 'EdDSA']), 'String!'],
  ['secret', z.string().optional(), 'String'],
  ['tags', z.array(z.string()), '[String!]!'],
  ['maybe_tags', z.array(z.string()).nullable(), '[String!]'],
  ['config', z.record(z.string(), z.unknown()), 'JSON!'],
  ['value', z.union([z.number(), z.string()]), 'JSON!'],
  ['nested', Nested, 'Nested!'],
  ['nested_list', z.array(Nested), '[Nested!]!'],
];

const INPUTS: [key: string, schema: z.ZodType, graphql: string][] = [
  ['name', z.string().min(1), 'String!'],
  ['grace_period_seconds', z.number().int().default(0), 'Int'],
  ['threshold', z.number().nullable().optional(), 'Float'],
  ['color', z.enum(COLORS).optional(), 'Color'],
  [
    'since',
    z.iso
      .datetime()
      .transform((s) => new Date(s))
      .optional(),
    'String',
  ],
  ['limit', z.coerce.number().int().default(20), 'Int'],
  ['types', z.array(z.string()).optional(), '[String!]'],
  ['created[gte]', z.string().optional(), 'String'],
  [
    'filter',
    z
      .strictObject({ brands: z.array(z.string()).optional(), subject_types: z.array(z.string()).optional() })
      .nullable()
      .optional(),
    'FilterInput',
  ],
];

const Thing = z.object({ object: z.literal('thing'), ...Object.fromEntries(OUTPUTS.map(([k, s]) => [k, s])) });
const Input = z.strictObject(Object.fromEntries(INPUTS.map(([k, s]) => [k, s])));

objectType('Nested', Nested, { description: 'A nested object, named once' });
objectType('Thing', Thing, { description: 'Every kind of field' });
inputType('FilterInput', Input.shape.filter!, { description: 'A nested input' });
let derived: ReturnType<typeof argsOf> | undefined;
builder.queryField('thing', (t) =>
  t.field({
    type: 'Boolean',
    args: (derived = argsOf(t.arg, ['id', 'requirement'], Input, { params: { id: 'program', requirement: 'id' }, ids: ['name'] })).args,
    resolve: () => true,
  }),
);
const schema: GraphQLSchema = builder.toSchema();
const fields = (schema.getType('Thing') as GraphQLObjectType).getFields();
const field = (name: string): GraphQLField<unknown, unknown> => fields[name]!;

describe('objectType', () => {
  it.each(OUTPUTS)('%s: %o is %s', (key, _schema, graphql, description) => {
    expect(String(field(camel(key)).type)).toBe(graphql);
    expect(field(camel(key)).description ?? undefined).toBe(description);
  });

  it('leaves out the object discriminator', () => expect(fields.object).toBeUndefined());

  it('resolves each field from its snake_case key', () => {
    const parent = { created_at: '2030-01-01T00:00:00.000Z', other_id: 'o' };
    expect(field('createdAt').resolve!(parent, {}, {}, {} as never)).toBe(parent.created_at);
    expect(field('otherId').resolve!(parent, {}, {}, {} as never)).toBe('o');
  });

  it('reads a key GraphQL names alike without a resolver, so compiled execution reads it inline', () => {
    for (const name of ['id', 'count', 'tags', 'nested']) expect(field(name).resolve, name).toBeUndefined();
  });

  it('refuses a nested object without a GraphQL name', () => {
    // Pothos builds a type's fields when the type is declared or, before the first schema, when the schema is.
    expect(() => {
      objectType('Orphaned', z.object({ inner: z.object({ a: z.string() }) }), { description: 'x' });
      builder.toSchema();
    }).toThrow(/Orphaned\.inner: declare its objectType/);
  });
});

describe('argsOf', () => {
  const args = Object.fromEntries(
    schema
      .getQueryType()!
      .getFields()
      .thing!.args.map((a) => [a.name, String(a.type)]),
  );

  it.each(INPUTS)('%s: %o is the argument %s', (key, _schema, graphql) => {
    expect(args[camel(key)]).toBe(key === 'name' ? 'ID!' : graphql);
  });

  it('takes path ids as ID! arguments under their GraphQL names', () => {
    expect(args.program).toBe('ID!');
    expect(args.id).toBe('ID!');
  });

  it.each([
    ['omitted arguments stay omitted', {}, {}],
    [
      'camelCase arguments become snake_case keys',
      { gracePeriodSeconds: 5, createdGte: 'x' },
      { grace_period_seconds: 5, 'created[gte]': 'x' },
    ],
    ['null reaches a key that takes null (a clear)', { threshold: null }, { threshold: null }],
    ['null is omitted where zod takes no null', { name: null, color: null }, {}],
    [
      'nested inputs are converted too',
      { filter: { subjectTypes: ['operation'], brands: null } },
      { filter: { subject_types: ['operation'] } },
    ],
  ])('%s', (_rule, given, input) => {
    expect(derived!.invocation({ program: 'prog_1', id: 'req_1', ...given })).toEqual({
      params: { id: 'prog_1', requirement: 'req_1' },
      input,
    });
  });

  it('names the argument of each key that GraphQL spells differently (for errors)', () => {
    expect(derived!.argNames).toMatchObject({ grace_period_seconds: 'gracePeriodSeconds', 'created[gte]': 'createdGte' });
    expect(derived!.argNames).not.toHaveProperty('name');
  });
});
