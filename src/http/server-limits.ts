import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { HttpLimits } from '../config.ts';

/**
 * The node:http server with the limits that close slow and idle clients.
 *
 * - `headersTimeout`: a request's headers must arrive within this time of its
 *   first byte (a connection that sends nothing is covered too). Node 20 times
 *   it from the request's start, not from the previous response, so it no
 *   longer has to exceed keepAliveTimeout as old load-balancer advice said.
 * - `requestTimeout`: the whole request, body included (a slow-body client).
 * - `timeout` (idle): no byte either way while a plain request or its response
 *   is in flight (a stalled reader of a large response).
 * - `keepAliveTimeout` 65 s: idle keep-alive sockets outlive typical client
 *   pools (Node's fetch keeps them 4 s, load balancers 60 s): a server closing
 *   first races the client's next request, which then fails with ECONNRESET.
 *
 * Long-lived streams are exempt: an upgraded WebSocket leaves the HTTP parser
 * (so the header and request timeouts stop applying) and `ws` clears the
 * socket's idle timeout; an SSE response is admitted with `admitStream`, which
 * clears it. Connections have two budgets, so a flood of plain connections
 * cannot take the room kept for live subscribers: every connection starts in
 * the plain budget and moves to the stream budget when it upgrades or starts
 * streaming.
 */
export interface ApiServer {
  server: Server;
  /** False when the stream budget is full: a request asking for a stream is refused before it starts one. */
  streamRoom(): boolean;
  /** Moves a streaming (SSE) response's connection to the stream budget, exempt from the idle timeout, until the response ends. */
  admitStream(res: ServerResponse): void;
  /** Open connections in each budget, and how many were refused. */
  readonly counts: { plain: number; streams: number; refused: number };
}

export function createApiServer(limits: HttpLimits, log: Logger, listener: RequestListener): ApiServer {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks the two timeouts above on this interval (30 s by default, which stretched a 60 s timeout to 90).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 5))),
    },
    listener,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.timeout = limits.idleTimeoutMs;

  const counts = { plain: 0, streams: 0, refused: 0 };
  const streams = new WeakSet<Socket>();
  let lastWarning = 0;
  const refuse = (socket: Socket, budget: string) => {
    counts.refused++;
    // Throttled: a flood would otherwise turn into a flood of log lines.
    if (Date.now() - lastWarning > 10_000) {
      lastWarning = Date.now();
      log.warn(
        { budget, plain: counts.plain, streams: counts.streams, refused: counts.refused },
        'connection budget full; refusing connections',
      );
    }
    socket.destroy();
  };
  const toStream = (socket: Socket) => {
    if (streams.has(socket)) return;
    counts.plain--;
    counts.streams++;
    streams.add(socket);
  };

  server.on('connection', (socket: Socket) => {
    if (counts.plain >= limits.maxConnections) return refuse(socket, 'plain');
    counts.plain++;
    socket.once('close', () => (streams.has(socket) ? counts.streams-- : counts.plain--));
  });
  // Registered before the WebSocket server's own listener, so a refused upgrade never reaches it.
  server.on('upgrade', (_req, socket: Socket) => {
    if (counts.streams >= limits.maxStreams) return refuse(socket, 'streams');
    toStream(socket);
  });

  return {
    server,
    counts,
    streamRoom: () => counts.streams < limits.maxStreams,
    admitStream(res) {
      const socket = res.socket;
      if (!socket || streams.has(socket)) return;
      toStream(socket);
      socket.setTimeout(0);
      // A keep-alive connection serves plain requests again after the stream (Node re-arms its timeouts).
      res.once('close', () => {
        if (socket.destroyed || !streams.delete(socket)) return;
        counts.streams--;
        counts.plain++;
      });
    },
  };
}

const CLIENT_ABORT_CODES = new Set([
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ERR_STREAM_PREMATURE_CLOSE',
  'HPE_INVALID_EOF_STATE',
  'ERR_HTTP_REQUEST_TIMEOUT',
]);

/**
 * A client that went away mid-request or mid-response (reset, closed before
 * its body ended, an aborted body read) or was cut off by a timeout for being
 * too slow: the client's doing, not a server fault, so it is logged at debug,
 * never as an error (a slowloris flood must not become a flood of error logs).
 */
export function isClientAbort(err: unknown): boolean {
  const e = err as { code?: string; type?: string; message?: string } | null;
  if (!e) return false;
  return CLIENT_ABORT_CODES.has(e.code ?? '') || e.type === 'request.aborted' || e.message === 'aborted';
}
