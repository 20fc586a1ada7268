import { describe, expect, it } from 'vitest';
import {
  execute,
  GraphQLEnumType,
  GraphQLInt,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  parse,
  type ExecutionArgs,
} from 'graphql';
import { compiledExecution } from '../../src/graphql/compiled.ts';
import { schema as apiSchema } from '../../src/graphql/schema/index.ts';

/**
 * Compiled execution (src/graphql/compiled.ts) without a server: which
 * executions it swaps for graphql-jit, what it keeps, and that a compiled
 * operation answers as graphql-js does.
 */
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: {
      hello: { type: GraphQLString, args: { name: { type: new GraphQLNonNull(GraphQLString) } }, resolve: (_, { name }) => `hi ${name}` },
      n: { type: new GraphQLNonNull(GraphQLInt), resolve: () => 1 },
      color: {
        type: new GraphQLNonNull(new GraphQLEnumType({ name: 'Color', values: { DARK_RED: { value: 'dark_red' } } })),
        resolve: () => 'dark_red',
      },
      missing: { type: new GraphQLNonNull(GraphQLString), resolve: () => null },
      boom: {
        type: GraphQLString,
        resolve: () => {
          throw new Error('boom');
        },
      },
    },
  }),
});
const rootValue = {};

/** Runs one execution through the plugin's onExecute: the result, and whether the execute function was swapped. */
function run(
  plugin: ReturnType<typeof compiledExecution>,
  source: string,
  variableValues: Record<string, unknown> = {},
  operationName?: string,
) {
  const args = { schema, document: parse(source), rootValue, variableValues, operationName } as ExecutionArgs;
  let fn: (a: ExecutionArgs) => unknown = execute;
  let swapped = false;
  (plugin.onExecute as (p: unknown) => void)({ args, executeFn: execute, setExecuteFn: (f: typeof fn) => ((fn = f), (swapped = true)) });
  return { result: fn(args), swapped };
}

describe('compiled execution', () => {
  it("answers an enum by its name and a null non-null leaf with graphql-js's error, compiled as on graphql-js", () => {
    const plugin = compiledExecution();
    for (const q of ['{ color n }', '{ missing }', '{ n missing }']) {
      const first = run(plugin, q);
      const second = run(plugin, q);
      expect([first.swapped, second.swapped]).toEqual([false, true]);
      expect(JSON.stringify(second.result)).toBe(JSON.stringify(first.result));
    }
    expect(run(plugin, '{ color n }').result).toEqual({ data: { color: 'DARK_RED', n: 1 } });
  });

  it('compiles an operation on its second run, keeps it, and answers as graphql-js does', () => {
    const plugin = compiledExecution();
    const q = 'query A($x: String!) { hello(name: $x) n } query B { n }';
    expect(run(plugin, q, { x: 'a' }, 'A').swapped).toBe(false);
    const second = run(plugin, q, { x: 'b' }, 'A');
    expect(second.swapped).toBe(true);
    expect(second.result).toEqual(execute({ schema, document: parse(q), rootValue, variableValues: { x: 'b' }, operationName: 'A' }));
    // The other operation of the same document is its own entry.
    expect(run(plugin, q, {}, 'B').swapped).toBe(false);
  });

  it('gives a result with errors the shape graphql-js gives it (errors before data, the same bytes)', () => {
    const plugin = compiledExecution();
    const q = '{ n boom }';
    run(plugin, q);
    const compiled = run(plugin, q);
    expect(compiled.swapped).toBe(true);
    const js = execute({ schema, document: parse(q), rootValue });
    expect(Object.keys(compiled.result as object)).toEqual(Object.keys(js as object));
    expect(JSON.stringify(compiled.result)).toBe(JSON.stringify(js));
  });

  it('leaves variables that do not coerce, and operations jit cannot compile, to graphql-js', () => {
    const plugin = compiledExecution();
    const q = 'query A($x: String!) { hello(name: $x) }';
    run(plugin, q, { x: 'a' }, 'A');
    const bad = run(plugin, q, { x: 5 }, 'A');
    const expected = execute({ schema, document: parse(q), rootValue, variableValues: { x: 5 }, operationName: 'A' });
    expect(bad.result).toEqual(expected);
    expect((bad.result as { errors: { nodes?: unknown[] }[] }).errors[0]!.nodes).toBeDefined(); // graphql-js's error, naming the variable
    run(plugin, q, {}, 'Nope');
    expect(run(plugin, q, {}, 'Nope').swapped).toBe(false); // unknown operation: jit refuses, graphql-js answers
  });

  it('keeps at most its bound, dropping the least recently used', () => {
    const plugin = compiledExecution(2);
    const twice = (q: string) => (run(plugin, q), run(plugin, q).swapped);
    expect(twice('{ n }')).toBe(true);
    expect(twice('{ a: n }')).toBe(true);
    expect(run(plugin, '{ n }').swapped).toBe(true); // most recent now
    expect(twice('{ b: n }')).toBe(true); // drops `{ a: n }`
    expect(run(plugin, '{ n }').swapped).toBe(true);
    expect(run(plugin, '{ a: n }').swapped).toBe(false); // seen again from scratch
  });
});

describe("the API schema's event feed", () => {
  // A field with a resolver costs compiled execution a call, its info and its error handling per item; a page of 100
  // events had nine per event before the derived fields and the Relay plugin's reads were left to the default.
  it('resolves one field per event (createdAt, read from created_at); every other field of a page is read inline', () => {
    const resolved = (type: string) =>
      Object.entries((apiSchema.getType(type) as GraphQLObjectType).getFields())
        .filter(([, f]) => f.resolve)
        .map(([name]) => name);
    expect(resolved('Event')).toEqual(['createdAt']);
    expect(resolved('EventSubject')).toEqual([]);
    expect(resolved('QueryEventsConnectionEdge')).toEqual([]);
    expect(resolved('QueryEventsConnection')).toEqual(['pageInfo']);
  });
});
