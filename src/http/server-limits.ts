import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { HttpLimits } from '../config.ts';
import { DomainError } from '../domain/errors.ts';
import type { ClientAddresses } from './client-address.ts';

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
 * clears it.
 *
 * Connections have two budgets, so a flood of plain connections cannot take
 * the room kept for live subscribers, and each remote address (an IPv6 /64;
 * src/http/client-address.ts) has a share of each, so one client cannot take
 * a whole budget (docs/security.md, "Per-address limits"). A trusted proxy has
 * no share (it limits its own clients) but counts in the totals. What a
 * connection is is only known from its first request, so it is admitted:
 * - to the plain budget while that (and its address's share) has room;
 * - else, as undecided, to the stream budget while that has room: its first
 *   request decides. A WebSocket upgrade stays there (so a burst of upgrades is
 *   never refused for want of plain room); a plain request moves to the plain
 *   budget if it has room by then, else is answered 503. The wait is bounded
 *   by the headers timeout and the number by the stream budget and share;
 * - else refused at once: 503 with Retry-After, then closed.
 * An upgrade or SSE response of a plain connection moves it to the stream
 * budget (SSE: back when the response ends). Every refusal answers 503 with
 * `Retry-After` and `Connection: close`, never a bare reset or a hang.
 */
export interface ApiServer {
  server: Server;
  /** False when the stream budget, or the share of the socket's address, is full: a stream is refused before it starts. */
  streamRoom(socket: Socket): boolean;
  /** Moves a streaming (SSE) response's connection to the stream budget, exempt from the idle timeout, until the response ends. */
  admitStream(res: ServerResponse): void;
  /** Sets the one handler of admitted upgrades (graphql-ws); an upgrade over the budget never reaches it. */
  onUpgrade(handler: UpgradeHandler): void;
  /** Open connections in each budget, how many were refused, and how many addresses hold a share. */
  readonly counts: { plain: number; streams: number; refused: number; addresses: number };
}

export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** The 503 a refused connection gets, in the envelope of the path it asked for (`/` when refused before it asked). */
export interface Refusal {
  headers: Record<string, string>;
  body: string;
}

type Budget = 'plain' | 'streams';
interface Admitted {
  budget: Budget;
  /** Its address's share; undefined for a trusted proxy (or a socket without an address). */
  key: string | undefined;
  /** In the stream budget until its first request says what it is. */
  undecided: boolean;
}

/** Seconds a refused client is told to wait: a share frees as soon as one of its connections closes. */
const RETRY_AFTER_SECONDS = 1;

/** The refusal of a stream when `streamRoom` says no (GraphQL's SSE, MCP's streams): 503 with Retry-After like every refusal here. */
export const noStreamRoom = () =>
  new DomainError('service_unavailable', 'Too many live streams on this server; retry later', null, { retry_after: RETRY_AFTER_SECONDS });

export function createApiServer(
  limits: HttpLimits,
  addresses: ClientAddresses,
  log: Logger,
  listener: RequestListener,
  refusal: (path: string) => Refusal,
): ApiServer {
  const counts = { plain: 0, streams: 0, refused: 0, addresses: 0 };
  const shares = new Map<string, Record<Budget, number>>();
  const admitted = new WeakMap<Socket, Admitted>();
  const budgetOf: Record<Budget, { total: number; perAddress: number }> = {
    plain: { total: limits.maxConnections, perAddress: limits.maxConnectionsPerAddress },
    streams: { total: limits.maxStreams, perAddress: limits.maxStreamsPerAddress },
  };

  const room = (budget: Budget, key: string | undefined) =>
    counts[budget] < budgetOf[budget].total && (key === undefined || (shares.get(key)?.[budget] ?? 0) < budgetOf[budget].perAddress);
  const add = (budget: Budget, key: string | undefined, n: 1 | -1) => {
    counts[budget] += n;
    if (key === undefined) return;
    let share = shares.get(key);
    if (!share) shares.set(key, (share = { plain: 0, streams: 0 }));
    share[budget] += n;
    if (share.plain === 0 && share.streams === 0) shares.delete(key);
    counts.addresses = shares.size;
  };
  const move = (a: Admitted, to: Budget) => {
    if (a.budget === to) return;
    add(a.budget, a.key, -1);
    add(to, a.key, 1);
    a.budget = to;
  };

  let lastWarning = 0;
  const refused = (budget: string, key: string | undefined) => {
    counts.refused++;
    // Throttled: a flood would otherwise turn into a flood of log lines.
    if (Date.now() - lastWarning > 10_000) {
      lastWarning = Date.now();
      log.warn(
        { budget, address: key, plain: counts.plain, streams: counts.streams, refused: counts.refused },
        'connection budget or address share full; refusing connections',
      );
    }
  };
  /** The 503 written on the socket itself (before any request, or on an upgrade), then closed once it is sent. */
  const refuseRaw = (socket: Duplex, path: string) => {
    const { headers, body } = refusal(path);
    const head = Object.entries({ ...headers, 'Retry-After': String(RETRY_AFTER_SECONDS), Connection: 'close' })
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n');
    socket.once('finish', () => socket.destroy());
    socket.end(`HTTP/1.1 503 Service Unavailable\r\n${head}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  };

  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks the two timeouts above on this interval (30 s by default, which stretched a 60 s timeout to 90).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 5))),
    },
    (req, res) => {
      const a = admitted.get(req.socket);
      if (!a) return void req.socket.destroy(); // refused at accept: its 503 is sent already
      if (a.undecided) {
        a.undecided = false;
        if (room('plain', a.key)) move(a, 'plain');
        else {
          // Stays in the stream budget until it closes, right after this answer.
          refused('plain', a.key);
          const { headers, body } = refusal(req.url ?? '/');
          res.writeHead(503, {
            ...headers,
            'Content-Length': String(Buffer.byteLength(body)),
            'Retry-After': String(RETRY_AFTER_SECONDS),
            Connection: 'close',
          });
          res.end(body);
          return;
        }
      }
      listener(req, res);
    },
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.timeout = limits.idleTimeoutMs;

  server.on('connection', (socket: Socket) => {
    const key = addresses.shareKey(socket.remoteAddress);
    const budget: Budget | undefined = room('plain', key) ? 'plain' : room('streams', key) ? 'streams' : undefined;
    if (!budget) {
      refused('plain and streams', key);
      return refuseRaw(socket, '/');
    }
    const a: Admitted = { budget, key, undecided: budget === 'streams' };
    admitted.set(socket, a);
    add(budget, key, 1);
    socket.once('close', () => add(a.budget, a.key, -1));
  });

  let upgrades: UpgradeHandler | undefined;
  // The server's only 'upgrade' listener: an upgrade is admitted here or answered 503, never left to hang.
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const a = admitted.get(socket);
    if (!a) return socket.destroy();
    if (a.undecided) a.undecided = false;
    else if (a.budget === 'plain') {
      if (!room('streams', a.key)) {
        refused('streams', a.key);
        return refuseRaw(socket, req.url ?? '/');
      }
      move(a, 'streams');
    }
    if (upgrades) upgrades(req, socket, head);
    else refuseRaw(socket, req.url ?? '/'); // a worker process serves no WebSocket
  });

  return {
    server,
    counts,
    streamRoom: (socket) => room('streams', admitted.get(socket)?.key),
    onUpgrade(handler) {
      upgrades = handler;
    },
    admitStream(res) {
      const socket = res.socket;
      const a = socket && admitted.get(socket);
      if (!a || a.budget === 'streams') return;
      move(a, 'streams');
      socket.setTimeout(0);
      // A keep-alive connection serves plain requests again after the stream (Node re-arms its timeouts).
      res.once('close', () => {
        if (!socket.destroyed) move(a, 'plain');
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
