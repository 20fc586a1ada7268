import { execute, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { PublicEvent } from '../domain/event/event.ts';
import type { StreamView } from '../runtime/event-stream.ts';
import type { GraphQLContext } from './context.ts';

/**
 * Multiplexed subscriptions (what Hasura does for live queries): a
 * transport that writes frames itself (src/graphql/ws.ts) hands the events
 * subscription a view and a sink (`ctx.live`); the stream then executes the
 * operation once per event for every group of subscribers with the same
 * organization, filter and view key, and each subscriber's sink only wraps
 * the shared serialized payload in its own frame.
 *
 * The view key is everything besides organization and filter that could
 * change what the operation returns: the document and operation name, the
 * variables, and the caller's authorization scope (its token's scopes and
 * its brand). Two subscribers share a payload only when a new request of
 * one would have returned the other's bytes.
 */
export function liveView(query: string, args: Omit<ExecutionArgs, 'rootValue'>): StreamView<string> {
  const caller = (args.contextValue as GraphQLContext).caller;
  const scope = `${caller.organization.id}\u0000${caller.brand?.id ?? ''}\u0000${[...caller.scopes].sort().join(' ')}`;
  const key = `${scope}\u0000${args.operationName ?? ''}\u0000${JSON.stringify(args.variableValues ?? null)}\u0000${query}`;
  return {
    key,
    // graphql-js runs the selection with the event as root value, as its own subscribe does for each event (the
    // pipeline's execute would start a second subscription). The selection's resolvers read the event only; an
    // error there is a fault, never a result to share: the render fails and its subscribers end with internal_error.
    render: (e: PublicEvent) => {
      const result = execute({ ...args, rootValue: e }) as ExecutionResult | PromiseLike<ExecutionResult>;
      return 'then' in result && typeof result.then === 'function'
        ? Promise.resolve(result).then(serialize)
        : serialize(result as ExecutionResult);
    },
  };
}

/** The `payload` of a graphql-ws `next` message. */
function serialize(result: ExecutionResult): string {
  if (result.errors?.length) throw new AggregateError(result.errors, 'the events subscription selection failed');
  return JSON.stringify(result);
}
