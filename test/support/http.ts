import { request } from 'node:http';

/** The HTTP helper for tests: a thin fetch wrapper (JSON in, status + headers + parsed JSON out), and rawRequest for byte-exact requests. */
export interface HttpResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  headers?: Record<string, string>;
  /** Sent as-is (already a string), e.g. malformed JSON. */
  raw?: string;
}

export class HttpClient {
  constructor(readonly origin: string) {}

  async request<T = any>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let payload: string | undefined;
    if (opts.raw !== undefined) payload = opts.raw;
    else if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['content-type'] = 'application/json';
    const res = await fetch(this.origin + path, { method, headers, body: payload });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: parseJson(text) as T, text };
  }

  get<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>('GET', path, undefined, opts);
  }
  post<T = any>(path: string, body?: unknown, opts?: RequestOptions) {
    return this.request<T>('POST', path, body, opts);
  }
  delete<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>('DELETE', path, undefined, opts);
  }

  /** One GraphQL operation over HTTP POST. */
  graphql(query: string, variables: Record<string, unknown> = {}, opts: RequestOptions = {}) {
    return this.request<any>('POST', '/graphql', { query, variables }, opts);
  }
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

/**
 * One request with the path and headers sent byte for byte: fetch (WHATWG
 * URL) resolves `..` segments and re-encodes, so path-matching and fuzz tests
 * cannot use it. Only Content-Length is added (Node sends a GET's body
 * unframed otherwise); a body without Content-Type is sent so.
 */
export function rawRequest(
  origin: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawResponse> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const framed = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    const req = request({ host: hostname, port, method, path, headers: framed }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, body: parseJson(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function parseJson(text: string): any {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}
