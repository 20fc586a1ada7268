import type { Server } from 'node:http';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { ExecutionArgs, GraphQLError } from 'graphql';
import { isDomainError } from '../domain/errors.ts';
import { toGraphQLError } from './errors.ts';
import type { Yoga } from './yoga.ts';

/**
 * graphql-ws on the same path as HTTP GraphQL. Operations go through
 * `yoga.getEnveloped`, so WebSocket and HTTP share one pipeline and one
 * context factory (auth from `connectionParams.authorization`).
 */
type EnvelopedRoot = { execute: (a: ExecutionArgs) => unknown; subscribe: (a: ExecutionArgs) => unknown };

export function attachGraphQLWebSocket(server: Server, yoga: Yoga, path = '/graphql') {
  const wss = new WebSocketServer({ server, path });
  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as EnvelopedRoot).execute(args) as never,
      subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args) as never,
      onSubscribe: async (ctx, _id, params) => {
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params,
        });
        // The limits (src/graphql/limits.ts) refuse a document by throwing from parse or validate.
        let document;
        let errors: readonly GraphQLError[];
        try {
          document = parse(params.query);
          errors = validate(schema, document);
        } catch (e) {
          return [isDomainError(e) ? toGraphQLError(e, 'unknown') : (e as GraphQLError)];
        }
        if (errors.length) return errors;
        let contextValue;
        try {
          contextValue = await contextFactory();
        } catch (e) {
          return [e as GraphQLError];
        }
        return {
          schema,
          operationName: params.operationName,
          document,
          variableValues: params.variables,
          contextValue,
          rootValue: { execute, subscribe },
        };
      },
    },
    wss,
  );
  return {
    /**
     * Shutdown: every client gets close code 1001 (Going away), which
     * graphql-ws clients treat as retryable (resume with startingAfter), and
     * closing a socket returns its operations' iterators, releasing their
     * listeners. Clients that do not finish the close handshake within
     * `graceMs` are cut off, so stopping never waits on a peer.
     */
    close: async (graceMs = 1000) => {
      const disposed = Promise.resolve(disposable.dispose()); // resolves once every socket is gone
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([
        disposed.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs))),
      ]);
      clearTimeout(timer);
      if (late) for (const client of wss.clients) client.terminate();
      await disposed;
    },
  };
}
