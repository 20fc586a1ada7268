import { h } from './dom.ts';

/**
 * The console's credentials and its two ways to the API: GraphQL over HTTP (platform token) and the REST routes of
 * token management (user token) and the operator (operator token). Tokens live in this tab's sessionStorage only:
 * never in a URL, never in a cookie. An answer that says a credential no longer works signs it out.
 */
export type Kind = 'platform' | 'user' | 'operator';

export const KIND_LABEL: Record<Kind, string> = {
  platform: 'Platform token',
  user: 'Dashboard user token',
  operator: 'Operator token',
};

const KEY = (kind: Kind) => `console.${kind}`;

export const session = {
  get: (kind: Kind): string | null => sessionStorage.getItem(KEY(kind)),
  set: (kind: Kind, token: string) => sessionStorage.setItem(KEY(kind), token),
  clear: (kind: Kind) => sessionStorage.removeItem(KEY(kind)),
};

/** The token's kind from its prefix: `sk_…` platform, `ut_…` dashboard user, anything else the operator's. */
export const kindOf = (token: string): Kind => (token.startsWith('sk_') ? 'platform' : token.startsWith('ut_') ? 'user' : 'operator');

/** An API error: its stable code, message, param and request id, whatever the surface's envelope. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly requestId: string | null,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/** Codes that mean the credential itself no longer works: the console signs it out. */
const CREDENTIAL_ENDED = new Set(['invalid_token', 'platform_token_required']);

let onCredentialEnded: (kind: Kind, err: ApiError) => void = () => {};
export const whenCredentialEnds = (fn: (kind: Kind, err: ApiError) => void) => void (onCredentialEnded = fn);

export function failed(kind: Kind, err: ApiError): ApiError {
  if (CREDENTIAL_ENDED.has(err.code)) onCredentialEnded(kind, err);
  return err;
}

interface GraphQLErrorShape {
  message: string;
  extensions?: { code?: string; request_id?: string; param?: string | null };
}

export const graphQLError = (e: GraphQLErrorShape | undefined, requestId: string | null = null) =>
  new ApiError(
    e?.extensions?.code ?? 'graphql_error',
    e?.message ?? 'GraphQL error',
    e?.extensions?.request_id ?? requestId,
    e?.extensions?.param ?? null,
  );

const random = () => crypto.randomUUID();

/** A GraphQL operation with the platform token; mutations carry a fresh Idempotency-Key. */
export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const token = session.get('platform');
  if (!token) throw new ApiError('platform_token_required', 'Sign in with a platform token', null);
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json',
  };
  if (/^\s*mutation\b/.test(query)) headers['idempotency-key'] = `console-${random()}`;
  const res = await fetch('/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  const body = (await res.json().catch(() => null)) as { data?: T; errors?: GraphQLErrorShape[] } | null;
  if (!body) throw failed('platform', new ApiError('bad_response', `HTTP ${res.status}`, res.headers.get('request-id')));
  if (body.errors?.length) throw failed('platform', graphQLError(body.errors[0], res.headers.get('request-id')));
  return body.data as T;
}

/** A REST call with the user or operator token; both envelopes' errors become an ApiError. */
export async function rest<T>(kind: Exclude<Kind, 'platform'>, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const token = session.get(kind);
  if (!token) throw new ApiError('invalid_token', `Sign in with the ${KIND_LABEL[kind].toLowerCase()}`, null);
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method === 'POST') headers['idempotency-key'] = `console-${random()}`;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const out = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  if (res.ok) return out as T;
  const e = out?.error;
  const requestId = res.headers.get('request-id');
  if (e && typeof e === 'object') {
    const b = e as { code: string; message: string; request_id?: string; param?: string | null };
    throw failed(kind, new ApiError(b.code, b.message, b.request_id ?? requestId, b.param ?? null));
  }
  throw failed(kind, new ApiError(typeof e === 'string' ? e : `http_${res.status}`, String(out?.message ?? res.statusText), requestId));
}

/**
 * What a code means for the person at the console, where the API's message is terse on purpose: the API answers one
 * `invalid_token` for a wrong, revoked or expired token (it does not say which), and `developer_access_paused` while
 * the operator's kill switch is engaged (the token itself is fine).
 */
const MEANING: Record<string, string> = {
  invalid_token: 'This token was not accepted (wrong, revoked or expired).',
  platform_token_required: 'Sign in with a platform token (sk_…) to open this view.',
  developer_access_paused: 'Developer access is paused: the operator engaged the kill switch. The token works again once it is released.',
};

/** An error state: what it means, then the API's code, message and request id (what support needs). */
export function errorBox(err: unknown): HTMLElement {
  const e = err instanceof ApiError ? err : new ApiError('client_error', err instanceof Error ? err.message : String(err), null);
  const meaning = Object.hasOwn(MEANING, e.code) ? MEANING[e.code] : undefined;
  return h(
    'div',
    { class: 'error', role: 'alert' },
    meaning ? h('p', { class: 'error-meaning' }, meaning) : null,
    h('strong', { class: 'error-code' }, e.code),
    ': ',
    e.message,
    e.param ? h('span', {}, ` (param ${e.param})`) : null,
    e.requestId ? h('div', { class: 'muted' }, 'request_id ', h('code', { class: 'request-id' }, e.requestId)) : null,
  );
}
