import type { ExecutionResult } from 'graphql';
import { Repeater, type Plugin } from 'graphql-yoga';
import type { GraphQLContext } from './context.ts';

/**
 * Every GraphQL subscription (graphql-ws and SSE alike) ends when the access
 * that opened it ends (src/domain/platform/stream-authority.ts): the source
 * is returned and the stream fails with the DomainError a new request would
 * get. Each transport frames that ending its own way (src/graphql/ws.ts closes
 * the socket; SSE sends the error as a `next` event, then `complete`).
 */
export function endStreamsWhenAccessEnds(): Plugin<GraphQLContext> {
  return {
    onSubscribe: ({ args }) => ({
      onSubscribeResult: ({ result, setResult }) => {
        if (!result || typeof result !== 'object' || !(Symbol.asyncIterator in result)) return;
        setResult(untilAccessEnds(result as AsyncIterable<ExecutionResult>, args.contextValue as GraphQLContext));
      },
    }),
  };
}

function untilAccessEnds<T>(source: AsyncIterable<T>, ctx: GraphQLContext): Repeater<T> {
  return new Repeater<T>(async (push, stop) => {
    const iterator = source[Symbol.asyncIterator]();
    const unwatch = ctx.gate.streams.watch(ctx.grant, (err) => stop(err));
    const stopped = stop.then(() => ({ done: true as const, value: undefined }));
    try {
      for (;;) {
        const next = await Promise.race([iterator.next(), stopped]);
        if (next.done) break;
        await push(next.value);
      }
      stop();
    } catch (err) {
      stop(err);
    } finally {
      unwatch();
      await iterator.return?.();
    }
  });
}
