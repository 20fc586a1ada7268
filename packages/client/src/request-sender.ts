import { PlatformError, errorFromResponse } from './error.ts';
import { toCamelCase, toSnakeCase } from './key-case.ts';
import { DEFAULT_RETRY_POLICY, parseRetryAfter, retryDelayMs, shouldRetry, sleep, type RetryPolicy } from './retry.ts';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface RequestSenderOptions {
  /** Every path is appended to it, e.g. `https://api.example.com/v1/platform`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  maxRetries?: number;
  /** Upper bound of any single wait between attempts, `Retry-After` included. */
  maxRetryDelayMs?: number;
  fetch?: FetchLike;
}

export interface RequestOptions {
  /** Use this key instead of a generated one (mutations only). */
  idempotencyKey?: string;
  /** Extra headers for this call (e.g. `Service-Brand`). */
  headers?: Record<string, string>;
  timeoutMs?: number;
  maxRetries?: number;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** camelCase; sent as snake_case. */
  query?: Record<string, unknown>;
  /** camelCase; sent as snake_case JSON. */
  body?: Record<string, unknown>;
  /**
   * Whether the route honours Idempotency-Key. Mutations of such routes get a
   * generated UUID key (unless one is given), reused on every retry.
   */
  idempotent?: boolean;
  options?: RequestOptions;
}

export interface ApiResponse<T = any> {
  status: number;
  /** The body, camelCased. */
  body: T;
  requestId: string | null;
  headers: Headers;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The one request pipeline of the client library: serialize (snake_case
 * query and body), attach auth and the Idempotency-Key, send with a timeout,
 * retry by the policy in retry.ts, parse (camelCase) or throw PlatformError.
 */
export class RequestSender {
  readonly baseUrl: string;
  private readonly opts: RequestSenderOptions;
  private readonly fetchImpl: FetchLike;

  constructor(opts: RequestSenderOptions) {
    this.opts = opts;
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    const f = opts.fetch ?? globalThis.fetch;
    if (!f) throw new Error('No fetch implementation: pass `fetch` in the client options');
    this.fetchImpl = (input, init) => f(input, init);
  }

  async request<T = any>(spec: RequestSpec): Promise<ApiResponse<T>> {
    return readResponse<T>(await this.respond(spec));
  }

  /**
   * The response body as it arrives (a CSV export), not read into memory: an error status is read and thrown as
   * `request` throws it. The timeout covers the wait for the response's head, not the whole body.
   */
  async stream(spec: RequestSpec): Promise<ReadableStream<Uint8Array>> {
    const res = await this.respond(spec);
    if (!res.ok || !res.body) {
      await readResponse(res);
      return new ReadableStream({ start: (c) => c.close() });
    }
    return res.body;
  }

  /** Sends the request, retrying what the policy allows; the last response, unread. */
  private async respond(spec: RequestSpec): Promise<Response> {
    const o = spec.options ?? {};
    const policy: RetryPolicy = {
      ...DEFAULT_RETRY_POLICY,
      maxRetries: o.maxRetries ?? this.opts.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries,
      maxDelayMs: this.opts.maxRetryDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
    };
    const mutation = spec.method !== 'GET';
    // One key per call, generated before the first attempt: every retry carries it.
    const idempotencyKey = mutation && spec.idempotent ? (o.idempotencyKey ?? globalThis.crypto.randomUUID()) : undefined;
    const replayable = spec.method === 'GET' || spec.method === 'DELETE' || idempotencyKey !== undefined;
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: `Bearer ${this.opts.token}`,
      ...this.opts.headers,
      ...o.headers,
    };
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    let payload: string | undefined;
    if (spec.body !== undefined || spec.method === 'POST') {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(toSnakeCase(spec.body ?? {}));
    }
    const url = this.baseUrl + spec.path + queryString(spec.query);
    const timeoutMs = o.timeoutMs ?? this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;

    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.send(url, { method: spec.method, headers, body: payload }, timeoutMs);
      } catch (cause) {
        if (shouldRetry({ kind: 'network' }, replayable, attempt, policy)) {
          await sleep(retryDelayMs(attempt, undefined, policy));
          continue;
        }
        throw networkError(cause, timeoutMs, url);
      }
      if (!res.ok && shouldRetry({ kind: 'response', status: res.status }, replayable, attempt, policy)) {
        await res.body?.cancel().catch(() => {});
        await sleep(retryDelayMs(attempt, parseRetryAfter(res.headers.get('retry-after')), policy));
        continue;
      }
      return res;
    }
  }

  private async send(url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new TimeoutError(timeoutMs)), timeoutMs);
    try {
      return await this.fetchImpl(url, { ...init, signal: controller.signal });
    } finally {
      clearTimeout(timer);
    }
  }
}

class TimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`No response within ${timeoutMs} ms`);
  }
}

function networkError(cause: unknown, timeoutMs: number, url: string): PlatformError {
  const timedOut = cause instanceof TimeoutError || (cause as { name?: string })?.name === 'TimeoutError';
  return new PlatformError({
    code: timedOut ? 'timeout' : 'connection_error',
    message: timedOut ? `No response from ${url} within ${timeoutMs} ms` : `Could not reach ${url}: ${(cause as Error)?.message ?? cause}`,
    cause,
  });
}

async function readResponse<T>(res: Response): Promise<ApiResponse<T>> {
  const requestId = res.headers.get('request-id');
  const text = await res.text();
  // A CSV export is text: handed back as it came.
  if (res.ok && (res.headers.get('content-type') ?? '').startsWith('text/csv'))
    return { status: res.status, body: text as T, requestId, headers: res.headers };
  let parsed: unknown;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new PlatformError({
        code: 'invalid_response',
        message: `HTTP ${res.status}: the response is not JSON: ${text.slice(0, 200)}`,
        status: res.status,
        requestId,
        raw: text,
      });
    }
  }
  if (!res.ok) throw errorFromResponse(res.status, parsed, requestId);
  return { status: res.status, body: toCamelCase<T>(parsed), requestId, headers: res.headers };
}

/** camelCase params as a snake_case query string; arrays repeat the key, undefined is skipped, a Date is its ISO string (as in a body). */
function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(toSnakeCase<Record<string, unknown>>(query))) {
    if (v === undefined || v === null) continue;
    for (const item of Array.isArray(v) ? v : [v]) params.append(k, item instanceof Date ? item.toISOString() : String(item));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}
