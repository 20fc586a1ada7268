/**
 * The one error class of the client library. Callers branch on `code`, never
 * on `message`: it is the API's stable code (`missing_scope`,
 * `idempotency_key_conflict`, ...) or one of the client-side codes below.
 *
 * Client-side codes:
 * - `connection_error`: the server could not be reached (after any retries);
 * - `timeout`: no response within `timeoutMs` (after any retries);
 * - `invalid_response`: a response body that is not the API's JSON;
 * - `operation_wait_timeout`: `operations.wait` gave up; the operation keeps running;
 * - `webhook_headers_missing`, `webhook_signature_invalid`, `webhook_secret_invalid`,
 *   `webhook_timestamp_out_of_tolerance`, `webhook_payload_invalid`: `webhooks.verify`.
 */
export class PlatformError extends Error {
  override readonly name = 'PlatformError';
  readonly code: string;
  readonly param: string | null;
  /** The server's request id (`Request-Id` header, `request_id` in the body); null for client-side errors. */
  readonly requestId: string | null;
  /** The HTTP status; 0 when no response was received or the error is client-side. */
  readonly status: number;
  /** Surface A only: the scope a 403 names. */
  readonly requiredScope: string | null;
  /** The raw (snake_case) error body as received, for logging. */
  readonly raw: unknown;

  constructor(init: {
    code: string;
    message: string;
    status?: number;
    param?: string | null;
    requestId?: string | null;
    requiredScope?: string | null;
    raw?: unknown;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.status = init.status ?? 0;
    this.param = init.param ?? null;
    this.requestId = init.requestId ?? null;
    this.requiredScope = init.requiredScope ?? null;
    this.raw = init.raw;
  }
}

export function isPlatformError(e: unknown): e is PlatformError {
  return e instanceof PlatformError;
}

/**
 * Reads an error response of either surface: Surface B's
 * `{ error: { code, message, param, request_id } }` or Surface A's (and the
 * dashboard's and operator's) `{ error: "<code>", message, param?, required_scope?, request_id }`.
 */
export function errorFromResponse(status: number, body: unknown, headerRequestId: string | null): PlatformError {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, any>;
  const nested = typeof b.error === 'object' && b.error !== null ? (b.error as Record<string, any>) : undefined;
  const flat = nested ?? b;
  const code = nested ? nested.code : typeof b.error === 'string' ? b.error : undefined;
  return new PlatformError({
    code: typeof code === 'string' ? code : `http_${status}`,
    message: typeof flat.message === 'string' ? flat.message : `HTTP ${status}`,
    status,
    param: typeof flat.param === 'string' ? flat.param : null,
    requestId: typeof flat.request_id === 'string' ? flat.request_id : headerRequestId,
    requiredScope: typeof flat.required_scope === 'string' ? flat.required_scope : null,
    raw: body,
  });
}
