import http from 'node:http';
import https from 'node:https';
import { AddressRefused, checkLiteralHost, guardedLookup, type AddressPolicy } from './address-guard.ts';
import { parseRetryAfter } from '../../../packages/shared/src/retry-after.ts';

/**
 * One delivery attempt over HTTP: POST, no redirects followed, a hard
 * deadline covering connect, headers and the excerpt, and at most
 * EXCERPT_BYTES of the response body read (the socket is destroyed after
 * that, so a receiver streaming a huge body costs nothing). Never throws:
 * every failure becomes an outcome the worker records.
 */
export const EXCERPT_BYTES = 1024;
const ERROR_MAX = 200;

export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  excerpt: string | null;
  durationMs: number;
  /** A 429 or 503 with a `Retry-After` (seconds, or an HTTP date): how long the receiver asked to wait. */
  retryAfterMs?: number;
}

export interface SendOptions extends AddressPolicy {
  timeoutMs: number;
  agents: Agents;
}

export interface Agents {
  'http:': http.Agent;
  'https:': https.Agent;
}

/** How long an idle keep-alive socket is kept: below the 5 s after which Node servers (and many others) close theirs. */
export const IDLE_SOCKET_MS = 4000;

/**
 * Keep-alive agents for one worker, so connections to a destination
 * (host:port) are reused. A new connection is made only when no idle one is
 * free, and it goes through the request's guarded `lookup` (or the literal
 * check) like any other: the SSRF guard is on the connect path, and an idle
 * socket is only ever reused for the same host name and port it was checked
 * for. Agents belong to one worker, hence to one address policy: a socket
 * opened while loopback was allowed is never lent to a worker that refuses
 * it. Sockets to a destination are bounded by the requests in flight to it
 * (the sum of its endpoints' adaptive limits) and by `total` (the worker's
 * concurrency) overall, so the agent never queues a request and never closes
 * a socket the next burst would reopen; an idle one is closed after
 * IDLE_SOCKET_MS.
 */
export function keepAliveAgents(total: number): Agents {
  const o = { keepAlive: true, maxSockets: total, maxFreeSockets: total, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' as const };
  return { 'http:': new http.Agent(o), 'https:': new https.Agent(o) };
}

export function postWebhook(url: string, headers: Record<string, string>, body: string, opts: SendOptions): Promise<AttemptOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    let retryAfterMs: number | undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    /** `drained`: the response ended normally, so its keep-alive socket may be reused. */
    const finish = (error: string | null, drained = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!drained) req.destroy();
      const excerpt = size ? Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8') : null;
      const redirect = statusCode !== null && statusCode >= 300 && statusCode < 400 ? 'redirect not followed' : null;
      const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
      resolve({
        ok,
        statusCode,
        error: ok
          ? null
          : ((error ?? redirect ?? (statusCode !== null ? `HTTP ${statusCode}` : 'no response'))?.slice(0, ERROR_MAX) ?? null),
        excerpt,
        durationMs: Math.round(performance.now() - started),
        ...(retryAfterMs !== undefined && !ok ? { retryAfterMs } : {}),
      });
    };

    let u: URL;
    try {
      u = new URL(url);
      checkLiteralHost(opts, u.hostname);
    } catch (e) {
      // A refused literal address: nothing was sent.
      resolve({ ok: false, statusCode: null, error: String((e as Error).message).slice(0, ERROR_MAX), excerpt: null, durationMs: 0 });
      return;
    }
    const transport = u.protocol === 'https:' ? https : http;
    const target = u;
    /**
     * A keep-alive socket the receiver closed while it sat idle fails the next
     * request on it before any answer (reset, broken pipe): the receiver never
     * saw that request, so it is sent once more on a new connection (through
     * the guarded lookup like any new connection), within the same deadline.
     */
    const send = (fresh: boolean): http.ClientRequest => {
      const r = transport.request(target, {
        method: 'POST',
        agent: fresh ? false : opts.agents[target.protocol as 'http:' | 'https:'],
        lookup: guardedLookup(opts, target.hostname) as never,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'platform-api-webhooks/1',
        },
      });
      r.on('error', (e: NodeJS.ErrnoException) => {
        if (!fresh && r.reusedSocket && statusCode === null && !settled && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) {
          req = send(true);
          return;
        }
        finish(e instanceof AddressRefused || !e.code || e.message.includes(e.code) ? e.message : `${e.code}: ${e.message}`);
      });
      r.on('response', (res) => {
        statusCode = res.statusCode ?? null;
        if (statusCode === 429 || statusCode === 503) retryAfterMs = parseRetryAfter(res.headers['retry-after'], Date.now());
        res.on('data', (chunk: Buffer) => {
          if (size < EXCERPT_BYTES) chunks.push(chunk);
          size += chunk.length;
          if (size >= EXCERPT_BYTES) finish(null);
        });
        res.on('end', () => finish(null, true));
        res.on('error', () => finish(null));
        res.on('aborted', () => finish(null));
      });
      r.end(body);
      return r;
    };
    const timer = setTimeout(() => finish(statusCode === null ? `timeout after ${opts.timeoutMs} ms` : null), opts.timeoutMs);
    let req = send(false);
  });
}
