import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import { DomainError } from '../domain/errors.ts';
import type { GraphQLContext } from './context.ts';

/**
 * GraphQL over SSE with resumable event ids. Every `next` of the `events`
 * subscription carries `id: <seq>`, whatever the selection, so a client that
 * reconnects sends `Last-Event-ID` (EventSource does by itself) and the
 * subscription resumes after it, as `startingAfter` would, with no gap or
 * duplicate. Otherwise the stream is Yoga's: a `:` comment first and every
 * 12 s, `event: next` per result, `event: complete` at the end.
 */
type ResultProcessor = Parameters<Parameters<NonNullable<Plugin['onResultProcess']>>[0]['setResultProcessor']>[0];
const SEQ = Symbol('seq');
type Stamped = ExecutionResult & { [SEQ]?: string };
const PING_MS = 12_000;

export function sseEventIds(): Plugin<GraphQLContext> {
  return {
    onSubscribe: ({ args }) => ({
      onSubscribeResult: ({ result, setResult }) => {
        // Only HTTP requests can be SSE (graphql-ws operations have no `request`): nothing to stamp on a socket.
        if (!isAsyncIterable(result) || !(args.contextValue as { request?: unknown }).request) return;
        const ctx = args.contextValue as GraphQLContext;
        // The subscription field's resolver records the seq of the event it resolved (src/graphql/schema/event.ts);
        // results are produced one at a time, so it belongs to the result just produced.
        setResult(
          mapAsyncIterator(result as AsyncIterableIterator<Stamped>, (r: Stamped) => {
            if (ctx.streamCursor?.seq !== undefined) r[SEQ] = ctx.streamCursor.seq;
            return r;
          }),
        );
      },
    }),
    onResultProcess: ({ request, result, setResultProcessor }) => {
      if (isAsyncIterable(result) && (request.headers.get('accept') ?? '').toLowerCase().includes('text/event-stream')) {
        setResultProcessor(processSse, 'text/event-stream');
      }
    },
  };
}

/** `Last-Event-ID`: the seq the client last received; a resume point like `startingAfter`. */
export function lastEventId(header: string | null | undefined): bigint | undefined {
  if (header == null || header === '') return undefined;
  if (!/^\d{1,18}$/.test(header))
    throw new DomainError('invalid_request', 'Last-Event-ID must be a seq number this stream sent', 'Last-Event-ID');
  return BigInt(header);
}

const processSse: ResultProcessor = (result, fetchAPI) => {
  const encoder = new fetchAPI.TextEncoder();
  const iterator = (result as AsyncIterable<Stamped>)[Symbol.asyncIterator]();
  let ping: NodeJS.Timeout | undefined;
  const body = new fetchAPI.ReadableStream({
    start(controller) {
      controller.enqueue(encoder.encode(':\n\n')); // some clients wait for a first byte before reading
      ping = setInterval(() => {
        if (controller.desiredSize === null) return clearInterval(ping);
        if (controller.desiredSize > 0) controller.enqueue(encoder.encode(':\n\n'));
      }, PING_MS);
    },
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.value != null) {
          const seq = next.value[SEQ];
          controller.enqueue(
            encoder.encode(
              `${seq !== undefined ? `id: ${seq}\n` : ''}event: next\ndata: ${JSON.stringify(withoutInternals(next.value))}\n\n`,
            ),
          );
        }
        if (next.done) {
          controller.enqueue(encoder.encode('event: complete\ndata:\n\n'));
          clearInterval(ping);
          controller.close();
        }
      } catch (err) {
        clearInterval(ping);
        controller.error(err);
      }
    },
    async cancel() {
      clearInterval(ping);
      await iterator.return?.();
    },
  });
  return new fetchAPI.Response(body, {
    status: 200,
    headers: { 'Content-Type': 'text/event-stream', Connection: 'keep-alive', 'Cache-Control': 'no-cache', 'Content-Encoding': 'none' },
  });
};

/** What Yoga keeps to itself in a result: the `http` extension (status, headers) on the result and its errors. */
function withoutInternals(r: ExecutionResult): ExecutionResult {
  if (!r.errors?.length && !r.extensions?.http) return r;
  const { http: _http, ...extensions } = r.extensions ?? {};
  return {
    ...r,
    errors: r.errors?.map((e) => {
      const json = e.toJSON();
      const { http: _h, unexpected: _u, ...rest } = json.extensions ?? {};
      return { ...json, extensions: Object.keys(rest).length ? rest : undefined } as never;
    }),
    extensions: Object.keys(extensions).length ? extensions : undefined,
  };
}
