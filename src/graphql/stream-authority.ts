import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from './context.ts';

/**
 * Every GraphQL subscription (graphql-ws and SSE alike) ends when the access
 * that opened it ends (src/runtime/stream-authority.ts): the source
 * is returned and the stream fails with the DomainError a new request would
 * get. Each transport frames that ending its own way (src/graphql/ws.ts closes
 * the socket; SSE sends the error as a `next` event, then `complete`). A
 * graphql-ws events subscription that took its multiplexed delivery is held by
 * src/graphql/ws.ts without this wrapper: the stream's subscription watches
 * its access itself (`LiveDelivery.until`).
 */
export function endStreamsWhenAccessEnds(): Plugin<GraphQLContext> {
  return {
    onSubscribe: ({ args }) => ({
      onSubscribeResult: ({ result, setResult }) => {
        if (!result || typeof result !== 'object' || !(Symbol.asyncIterator in result)) return;
        if ((args.contextValue as GraphQLContext).live?.source) return;
        setResult(
          new UntilAccessEnds((result as AsyncIterable<ExecutionResult>)[Symbol.asyncIterator](), args.contextValue as GraphQLContext),
        );
      },
    }),
  };
}

/**
 * The source, until access ends: then the source is returned and the next
 * (or pending) `next()` rejects with the error. One small object per
 * subscription, not an iterator chain: thousands sit idle.
 */
class UntilAccessEnds<T> implements AsyncIterableIterator<T> {
  private readonly unwatch: () => void;
  private ended: { err?: unknown } | undefined;
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  private failer: ((e: unknown) => void) | undefined;

  constructor(
    private readonly source: AsyncIterator<T>,
    ctx: GraphQLContext,
  ) {
    this.unwatch = ctx.gate.streams.watch(ctx.grant, (err) => this.end({ err }));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.ended) return this.settled();
    return new Promise<IteratorResult<T>>((resolve, reject) => {
      this.waiter = resolve;
      this.failer = reject;
      this.source.next().then(
        (r) => {
          if (this.waiter !== resolve) return; // ended meanwhile
          this.waiter = this.failer = undefined;
          if (r.done) this.end({});
          resolve(r);
        },
        (err: unknown) => {
          if (this.waiter !== resolve) return;
          this.waiter = this.failer = undefined;
          this.end({});
          reject(err);
        },
      );
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.end({});
    return Promise.resolve({ done: true, value: undefined });
  }

  throw(err: unknown): Promise<IteratorResult<T>> {
    this.end({});
    return Promise.reject(err);
  }

  private end(how: { err?: unknown }): void {
    if (this.ended) return;
    this.ended = how;
    this.unwatch();
    void this.source.return?.()?.then(undefined, () => {});
    const resolve = this.waiter;
    const reject = this.failer;
    this.waiter = this.failer = undefined;
    if (resolve) this.settled().then(resolve, reject);
  }

  /** After the end: the access error once, then done. */
  private settled(): Promise<IteratorResult<T>> {
    const err = this.ended!.err;
    this.ended = {};
    return err === undefined ? Promise.resolve({ done: true, value: undefined }) : Promise.reject(err);
  }
}
