import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** Operations kept compiled; the least recently used is dropped beyond it. */
export const COMPILED_OPERATIONS = 1000;

/** What a document compiled to: its compiled query, or `null` when graphql-jit cannot compile it. */
type Entry = CompiledQuery | null;

/**
 * Compiled execution of queries and mutations (graphql-jit): each operation
 * is compiled once, to a function that resolves and completes its selection
 * without graphql-js's per-field interpretation, and kept per (document,
 * operation name) in a bounded LRU. Everything around execution stays:
 * parse, validation and their limits, the context factory (auth, rate
 * limit), the input guard and error masking run as for any operation, since
 * only the execute function of the envelop pipeline is swapped. An
 * operation graphql-jit refuses to compile (it reports errors instead of a
 * query) runs on graphql-js, which also answers it with the standard
 * messages (an unknown operation name, say), as are variables that do not
 * coerce. Subscriptions never come here
 * (`onSubscribe` keeps graphql-js).
 */
export function compiledExecution(max = COMPILED_OPERATIONS): Plugin {
  const cache = new Map<string, Entry>();

  const compiled = (args: ExecutionArgs): Entry => {
    const source = args.document.loc?.source.body;
    if (source === undefined) return null; // a document built by hand: no stable key
    const key = `${args.operationName ?? ''}\u0000${source}`;
    let entry = cache.get(key);
    if (entry !== undefined) {
      cache.delete(key); // most recently used goes last
    } else {
      const result = compileQuery(args.schema, args.document, args.operationName ?? undefined);
      entry = isCompiledQuery(result) ? result : null;
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
    }
    cache.set(key, entry);
    return entry;
  };

  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const query = compiled(args);
      if (!query) return;
      setExecuteFn((a: ExecutionArgs) => {
        const result = query.query(a.rootValue, a.contextValue, a.variableValues ?? {});
        // Variables that do not coerce (a result without data, before anything ran): graphql-js answers
        // them, with the messages and the variable's node that name it in `param` (see errors.ts).
        return 'then' in result || 'data' in result ? result : executeFn(a);
      });
    },
  };
}
