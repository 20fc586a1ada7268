import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  getNamedType,
  type GraphQLSchema,
  isEnumType,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** Operations kept compiled; the least recently used is dropped beyond it. */
export const COMPILED_OPERATIONS = 1000;

/** An operation seen once (`seen`), compiled, or `null` when graphql-jit cannot compile it. */
type Entry = CompiledQuery | null | 'seen';

/**
 * Compiled execution of queries and mutations (graphql-jit): an operation
 * run a second time is compiled, once, to a function that resolves and
 * completes its selection without graphql-js's per-field interpretation,
 * and kept per (document, operation name) in a bounded LRU. A document run
 * once (a one-off, or one of many generated documents) is not worth
 * compiling and runs on graphql-js. Everything around execution stays:
 * parse, validation and their limits, the context factory (auth, rate
 * limit), the input guard and error masking run as for any operation, since
 * only the execute function of the envelop pipeline is swapped. An
 * operation graphql-jit refuses to compile (it reports errors instead of a
 * query) runs on graphql-js, which also answers it with the standard
 * messages (an unknown operation name, say), as do variables that do not
 * coerce. Subscriptions never come here (`onSubscribe` keeps graphql-js).
 *
 * A built-in scalar is answered as the resolver gave it, without graphql-jit's
 * per-leaf serializer: its call builds the error's locations and path for
 * every leaf of every item (a page of 100 events executes in 7 to 8 µs
 * without them, 18 to 33 µs with them, most of it allocation). Every value is already
 * of its field's type, since each field is derived from the zod schema of the
 * presenter that made it (src/graphql/derive.ts); null checks stay. An
 * operation that selects an enum keeps the serializers, which turn an enum's
 * value into its name; custom scalars (DateTime, JSON) always keep theirs.
 */
export function compiledExecution(max = COMPILED_OPERATIONS): Plugin {
  const cache = new Map<string, Entry>();

  const compiled = (args: ExecutionArgs): CompiledQuery | null => {
    const source = args.document.loc?.source.body;
    if (source === undefined) return null; // a document built by hand: no stable key
    const key = `${args.operationName ?? ''}\u0000${source}`;
    let entry = cache.get(key);
    if (entry === undefined) {
      entry = 'seen';
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
    } else {
      cache.delete(key); // most recently used goes last
      if (entry === 'seen') {
        const result = compileQuery(args.schema, args.document, args.operationName ?? undefined, {
          disableLeafSerialization: !selectsEnum(args.schema, args.document),
        });
        entry = isCompiledQuery(result) ? result : null;
      }
    }
    cache.set(key, entry);
    return entry === 'seen' ? null : entry;
  };

  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const query = compiled(args);
      if (!query) return;
      setExecuteFn((a: ExecutionArgs) => {
        const result = query.query(a.rootValue, a.contextValue, a.variableValues ?? {});
        if ('then' in result) return result.then(inGraphQLJsOrder);
        // Variables that do not coerce (a result without data, before anything ran): graphql-js answers
        // them, with the messages and the variable's node that name it in `param` (see errors.ts).
        return 'data' in result ? inGraphQLJsOrder(result) : executeFn(a);
      });
    },
  };
}

/** Whether any field the document selects is of an enum type (or a list of one). */
function selectsEnum(schema: GraphQLSchema, document: DocumentNode): boolean {
  const info = new TypeInfo(schema);
  let found = false;
  visit(
    document,
    visitWithTypeInfo(info, {
      Field() {
        const type = info.getType();
        if (type && isEnumType(getNamedType(type))) found = true;
      },
    }),
  );
  return found;
}

/**
 * graphql-js puts `errors` before `data`, graphql-jit after: the same
 * request must serialize to the same bytes on its first (graphql-js) and
 * later (compiled) runs.
 */
function inGraphQLJsOrder(result: ExecutionResult): ExecutionResult {
  return result.errors?.length ? { errors: result.errors, data: result.data } : result;
}
