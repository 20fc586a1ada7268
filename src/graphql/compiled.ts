import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
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
        const result = compileQuery(args.schema, args.document, args.operationName ?? undefined);
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

/**
 * graphql-js puts `errors` before `data`, graphql-jit after: the same
 * request must serialize to the same bytes on its first (graphql-js) and
 * later (compiled) runs.
 */
function inGraphQLJsOrder(result: ExecutionResult): ExecutionResult {
  return result.errors?.length ? { errors: result.errors, data: result.data } : result;
}
