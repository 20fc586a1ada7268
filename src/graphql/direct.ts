import type { IncomingHttpHeaders } from 'node:http';
import { processRegularResult, type FetchAPI, type GraphQLParams } from 'graphql-yoga';
import { stampRequestIds, type Yoga } from './yoga.ts';

/** The media types of Yoga's JSON result processor, in its order. */
const JSON_TYPES = ['application/graphql-response+json', 'application/json'] as const;
type JsonType = (typeof JSON_TYPES)[number];

/**
 * The media type Yoga answers a single result under for this `Accept`
 * (graphql-yoga's `useResultProcessors`: entries with a charset other than
 * utf-8 are skipped, and the last match over the reversed list wins), or
 * `undefined` when neither JSON type is acceptable.
 */
export function acceptedJsonType(accept: string | undefined): JsonType | undefined {
  let chosen: JsonType | undefined;
  for (const entry of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',').reverse()) {
    const [type, ...params] = entry.split(';');
    if ((params.find((p) => p.includes('charset=')) ?? 'charset=utf-8') !== 'charset=utf-8') continue;
    const [pre, suf] = type!.split('/');
    for (const candidate of JSON_TYPES) {
      const [cPre, cSuf] = candidate.split('/');
      if ((pre === '*' || pre === cPre) && (suf === '*' || suf === cSuf)) chosen = candidate;
    }
  }
  return chosen;
}

interface Params {
  query: string;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
  extensions?: Record<string, unknown> | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const KNOWN = new Set(['query', 'operationName', 'variables', 'extensions']);

/**
 * Parameters Yoga's own checks would accept unchanged; anything else (a
 * batch, a missing query, an unexpected key...) goes through Yoga, which
 * answers it. A subscription (the keyword anywhere in the document, so
 * conservatively) also goes there: Yoga streams it or refuses it by `Accept`.
 * So does a mutation sent by GET, which Yoga refuses with 405.
 */
function plainParams(body: unknown, method: string): Params | undefined {
  if (!isObject(body) || typeof body.query !== 'string' || /\bsubscription\b/.test(body.query)) return undefined;
  if (method === 'GET' && /\bmutation\b/.test(body.query)) return undefined;
  for (const key in body) if (body[key] != null && !KNOWN.has(key)) return undefined;
  const { operationName, variables, extensions } = body;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  if (variables != null && !isObject(variables)) return undefined;
  if (extensions != null && !isObject(extensions)) return undefined;
  return body as unknown as Params;
}

/** `Headers.get` over Node's parsed headers (Node already joins repeated headers as fetch does). */
function headersOf(headers: IncomingHttpHeaders) {
  return {
    get(name: string): string | null {
      const v = headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

/** A GET's parameters as Yoga reads them (`variables` and `extensions` as JSON); `undefined` for anything unusual. */
function searchParams(url: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URL(url, 'http://localhost').searchParams) {
    if (!KNOWN.has(key) || key in out) return undefined;
    if (key === 'variables' || key === 'extensions') {
      try {
        out[key] = JSON.parse(value);
      } catch {
        return undefined;
      }
    } else out[key] = value;
  }
  return out;
}

/** A `Response` constructor that keeps what Yoga's JSON processor gives it: the body string, status and headers. */
class Captured {
  constructor(
    readonly body: string,
    readonly init: { status: number; headers: Record<string, string> },
  ) {}
}
const capture = { Response: Captured } as unknown as FetchAPI;

export interface DirectRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** A POST's body, already read within the body limit. */
  body?: string;
  /** Per-request server context, as Yoga receives it from the Koa mount. */
  serverContext: { requestId: string } & Record<string, unknown>;
}

export interface DirectResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * `GET /graphql`, and `POST /graphql` with a JSON body, without the fetch
 * adapter: no web `Request`, no body stream, no `Response` (the adapter cost
 * about 0.8 ms of CPU per request, and every Yoga hook runs after it has built
 * the `Request`: bench/HISTORY.md). The parameters go to Yoga's own
 * `getResultForParams` (its parameter hooks, its envelop pipeline with the
 * parse and validation caches, the limits, the context factory, compiled
 * execution and error masking), the request ids are stamped as
 * `onResultProcess` stamps them, and Yoga's JSON result processor computes
 * the status, headers and body, so both paths answer byte for byte alike
 * (test/graphql/direct.test.ts). Returns `undefined` for anything this path
 * does not take, unchanged for Yoga: another content type, an `Accept`
 * without a JSON type, parameters Yoga would refuse, a subscription.
 */
export function directJson(yoga: Yoga) {
  return async (req: DirectRequest): Promise<DirectResponse | undefined> => {
    let parsed: unknown;
    if (req.method === 'GET') parsed = searchParams(req.url);
    else {
      const contentType = req.headers['content-type']?.split(',')[0];
      if (req.method !== 'POST' || !(contentType === 'application/json' || contentType?.startsWith('application/json;'))) return undefined;
      try {
        parsed = JSON.parse(req.body ?? '');
      } catch {
        return undefined;
      }
    }
    const accepted = acceptedJsonType(req.headers.accept);
    if (!accepted) return undefined;
    const params = plainParams(parsed, req.method);
    if (!params) return undefined;
    const request = { method: req.method, url: req.url, headers: headersOf(req.headers) } as unknown as Request;
    const result = await yoga.getResultForParams({ params: params as GraphQLParams, request }, req.serverContext as never);
    const stamped = stampRequestIds(req.serverContext.requestId, result as Parameters<typeof stampRequestIds>[1]);
    const out = processRegularResult(stamped as never, capture, accepted) as unknown as Captured;
    return { status: out.init.status, headers: out.init.headers, body: out.body };
  };
}
