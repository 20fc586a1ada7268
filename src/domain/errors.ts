/**
 * The one error catalogue. Every rule violation is a DomainError carrying a
 * stable snake_case `code` (callers branch on it, never on the message), the
 * parameter at fault and public details. The domain knows no HTTP: each
 * transport maps a code to its answer (src/http/error-status.ts for the HTTP
 * status; serializers in rest/http/envelope.ts and src/graphql/errors.ts).
 */
export const ERROR_CODES = [
  'invalid_request',
  'invalid_event_type',
  'invalid_status',
  'unknown_scope',
  'unit_not_draft',
  'create_rate_limit_exceeded',
  'token_limit_reached',
  'webhook_endpoint_limit_reached',
  'encryption_key_not_configured',
  'idempotency_key_reused',
  'test_mode_not_yet_available',
  'brand_not_found',
  'query_too_complex',
  'handoff_invalid',
  'handoff_expired',
  'invalid_token',
  'platform_token_required',
  'user_token_required',
  'operator_token_required',
  'missing_scope',
  'publishable_key_not_allowed',
  'origin_not_allowed',
  'secret_key_not_allowed',
  'resource_missing',
  'route_not_found',
  'method_not_allowed',
  'request_timeout',
  'idempotency_key_conflict',
  'idempotency_key_in_use',
  'operation_conflict',
  'resource_conflict',
  'invalid_state_transition',
  'handoff_replayed',
  'connect_not_configured',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'subscriber_too_slow',
  'request_header_fields_too_large',
  'internal_error',
  'developer_access_paused',
  'service_unavailable',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    /** Extra fields: public ones (`required_scope`, `retry_after`) are serialized by name; others (`fault`) stay on the server. */
    readonly details: Record<string, unknown> = {},
  ) {
    // An answer, not a fault: no stack trace to capture (about 6 % of the CPU of a request refused for bad input,
    // and neither an envelope nor a log line shows it).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'DomainError';
  }
}

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;

export const missing = (what: string, id: string, param: string | null = null) =>
  new DomainError('resource_missing', `No such ${what}: '${id}'`, param);

export const missingScope = (scope: string) => new DomainError('missing_scope', `missing_scope:${scope}`, null, { required_scope: scope });

/** A unique-constraint violation from Prisma (P2002) or from the SQL port (SQLSTATE 23505), mapped once here at the domain boundary. */
export const isUniqueViolation = (e: unknown): boolean => {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return code === 'P2002' || code === '23505';
};

/**
 * SQLSTATEs of a database that is down, restarting, failing over or out of connections: class 08 (connection),
 * 57P01-03 (shutdown, starting up), 53300 (too many connections), 25006 (a write on a read-only server: the
 * connection reached a standby, the demoted primary of a failover, before the proxy in front cut it).
 */
const UNREACHABLE_SQLSTATE = /^(08...|57P0[123]|53300|25006)$/;
const UNREACHABLE_CODES = new Set(['P1001', 'P1002', 'P1017', 'P2024', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE']);
/** Driver adapter error kinds (@prisma/adapter-pg) for the same states. */
const UNREACHABLE_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
/**
 * node-postgres reports a lost or unusable connection without a code, only in
 * words, and Prisma may carry them inside a longer message: matched anywhere.
 */
const UNREACHABLE_MESSAGE =
  /Connection terminated|is not queryable|timeout exceeded when trying to connect|the database system is (starting up|shutting down|in recovery mode)|terminating connection due to administrator command|ECONNREFUSED|ECONNRESET/;

/**
 * A database that cannot store data: the rest of SQLSTATE class 53
 * (insufficient resources: 53100 disk_full, 53200 out_of_memory, 53400
 * configuration_limit_exceeded) and 58030 io_error, which PostgreSQL and
 * PGlite alike raise for a full or failing disk; a file system error that
 * reached us raw (Node's `code`).
 */
const STORAGE_SQLSTATE = /^(53...|58030)$/;
const STORAGE_ERRNO = new Set(['ENOSPC', 'EIO', 'EROFS', 'EDQUOT']);
/**
 * PGlite's file system (Emscripten's NODEFS over the data directory) throws
 * `ErrnoError` with Emscripten's own errno numbers, not Linux's: ENOSPC 51,
 * EIO 29, EROFS 69, EDQUOT 19.
 */
const STORAGE_WASM_ERRNO = new Set([51, 29, 69, 19]);
/**
 * PostgreSQL files EROFS under 42501 and an unknown errno under XX000, with
 * the system's words in the message (glibc's and musl's, PGlite being built
 * on the latter): the only sign of those two left.
 */
const STORAGE_MESSAGE = /No space left on device|Input\/output error|Read-only file system|(Disk )?quota exceeded/i;

/** Why the database cannot serve a request right now: `unreachable` (down, restarting, failing over) or `storage` (it cannot store data). */
export type DatabaseFault = 'unreachable' | 'storage';

function faultOf(x: {
  code?: unknown;
  originalCode?: unknown;
  kind?: unknown;
  name?: unknown;
  errno?: unknown;
  message?: unknown;
}): DatabaseFault | undefined {
  for (const code of [x.code, x.originalCode]) {
    if (typeof code !== 'string') continue;
    if (UNREACHABLE_CODES.has(code) || UNREACHABLE_SQLSTATE.test(code)) return 'unreachable';
    if (STORAGE_SQLSTATE.test(code) || STORAGE_ERRNO.has(code)) return 'storage';
  }
  if (x.name === 'ErrnoError' && typeof x.errno === 'number' && STORAGE_WASM_ERRNO.has(x.errno)) return 'storage';
  if (typeof x.kind === 'string' && UNREACHABLE_KINDS.has(x.kind)) return 'unreachable';
  if (typeof x.message === 'string') {
    if (STORAGE_MESSAGE.test(x.message)) return 'storage';
    if (UNREACHABLE_MESSAGE.test(x.message)) return 'unreachable';
  }
  return undefined;
}

/**
 * A database that cannot serve right now (restarting, failing over, out of
 * connections, out of disk, failing I/O) is the server's transient state, not
 * a fault in the request: 503 `service_unavailable` with Retry-After, mapped
 * once here. Looks through Prisma's wrapping (driver adapter error, cause
 * chain). `details.fault` (never serialized) tells the fronts a storage fault,
 * which /readyz must then see (Database.storageFault).
 */
export function databaseUnavailable(e: unknown): DomainError | undefined {
  const seen: unknown[] = [e];
  for (let i = 0; i < seen.length && i < 8; i++) {
    const x = seen[i] as (Parameters<typeof faultOf>[0] & { cause?: unknown; meta?: { driverAdapterError?: unknown } }) | null;
    if (!x || typeof x !== 'object') continue;
    const fault = faultOf(x);
    if (fault) return unavailable(fault);
    seen.push(x.cause, x.meta?.driverAdapterError);
  }
  return undefined;
}

/**
 * A storage fault lasts until someone frees space or replaces a disk: clients
 * wait longer between retries than for a restart, which is over in a second.
 */
const unavailable = (fault: DatabaseFault) =>
  fault === 'storage'
    ? new DomainError('service_unavailable', 'The database cannot store data right now; retry later', null, { retry_after: 5, fault })
    : new DomainError('service_unavailable', 'The database is unavailable for a moment; retry shortly', null, { retry_after: 1, fault });
