import { DEFAULT_GROUP_COMMIT } from './db/group-commit.ts';
import { availableParallelism } from 'node:os';
import { resolve, join } from 'node:path';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/**
 * All configuration, read once from the environment. Defaults make
 * `npm start` work on a fresh clone (embedded PGlite under ./.data).
 */
/** Operations one process runs at once; the pool (10 connections) keeps room for requests, since runs hold one only inside a transaction. */
export const DEFAULT_OPERATIONS_CONCURRENCY = 4;
export const DEFAULT_STREAM_BATCH_SUBSCRIBERS = 256;

const bool = z.enum(['0', '1', 'true', 'false', '']).transform((v) => v === '1' || v === 'true');

/**
 * What one process does (docs/operating/several-machines.md, ADR 0006):
 * `all` serves requests and runs the background workers (the default, and the
 * only role on the embedded database); `api` serves HTTP, GraphQL and live
 * streams without background workers; `worker` runs them with only the health
 * probes listening. Every role sequences the events it appends.
 */
export const ROLES = ['all', 'api', 'worker'] as const;
export type Role = (typeof ROLES)[number];

const Env = z.object({
  PLATFORM_ROLE: z.enum(ROLES).default('all'),
  PLATFORM_API_PROCESSES: z
    .string()
    .regex(/^(auto|[1-9][0-9]{0,2})$/, "PLATFORM_API_PROCESSES must be a number of processes (1-999) or 'auto' (one per core)")
    .default('1'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(10),
  DATABASE_CONNECTION_BUDGET: z.coerce.number().int().min(1).optional(),
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  PUBLIC_ORIGIN: z.string().url().optional(),
  DATABASE_URL: z.string().optional(),
  DATABASE_DIRECT_URL: z.string().optional(),
  DATABASE_POOL_MODE: z.enum(['session', 'transaction']).default('session'),
  DATA_DIR: z.string().default('.data'),
  GROUP_COMMIT_GROUPS: z.coerce.number().int().min(0).max(64).default(DEFAULT_GROUP_COMMIT.groups),
  GROUP_COMMIT_MEMBERS: z.coerce.number().int().min(1).max(256).default(DEFAULT_GROUP_COMMIT.members),
  BOOTSTRAP_FILE: z.string().optional(),
  BOOTSTRAP: bool.optional(),
  OPERATOR_TOKEN: z.string().min(16).optional(),
  KEY_BRAND: z
    .string()
    .regex(/^[a-z][a-z0-9]{0,15}$/, 'KEY_BRAND must be lowercase alphanumeric')
    .default('platform'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MCP_EXPOSE_SECRETS: bool.optional(),
  MCP_ALLOWED_HOSTS: z.string().default(''),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  GRAPHQL_DIRECT: bool.optional(),
  CREATE_RATE_LIMIT: z.coerce.number().int().positive().default(150),
  CREATE_RATE_WINDOW_SECONDS: z.coerce.number().int().positive().default(3600),
  RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(100),
  RATE_LIMIT_BURST: z.coerce.number().int().positive().default(200),
  SURFACE_A_RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(100),
  SURFACE_A_RATE_LIMIT_BURST: z.coerce.number().int().positive().default(200),
  // Partner connect (pk_live_ routes): every browser of a site shares its key, so the key's bucket is wide and each client IP's narrow.
  CONNECT_KEY_RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(50),
  CONNECT_KEY_RATE_LIMIT_BURST: z.coerce.number().int().positive().default(100),
  CONNECT_IP_RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(5),
  CONNECT_IP_RATE_LIMIT_BURST: z.coerce.number().int().positive().default(60),
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().positive().default(12),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().nonnegative().default(20),
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().positive().default(2000),
  GRAPHQL_MAX_DIRECTIVES: z.coerce.number().int().nonnegative().default(50),
  GRAPHQL_MAX_COST: z.coerce.number().int().positive().default(100),
  EVENT_STREAM_POLL_MS: z.coerce.number().int().positive().default(1000),
  EVENT_STREAM_BATCH_MS: z.coerce.number().int().min(0).max(1000).default(40),
  EVENT_STREAM_BATCH_SUBSCRIBERS: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_STREAM_BATCH_SUBSCRIBERS),
  STREAM_MAX_PENDING: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  IDEMPOTENCY_TTL_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(24 * 3600),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  HTTP_IDLE_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().positive().default(65_000),
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().positive().default(1_000),
  HTTP_MAX_STREAMS: z.coerce.number().int().positive().default(10_000),
  // One remote address's share of each connection budget (docs/security.md); TRUSTED_PROXIES are exempt.
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().positive().default(100),
  HTTP_MAX_STREAMS_PER_ADDRESS: z.coerce.number().int().positive().default(1_000),
  // Connections the kernel holds before the server accepts them (capped by net.core.somaxconn); Node's 511 reset a burst.
  HTTP_LISTEN_BACKLOG: z.coerce.number().int().positive().default(4_096),
  /** IPv6 clients are grouped by this prefix length for every per-address share and bucket (one subscriber usually holds a /64). */
  IPV6_ADDRESS_PREFIX: z.coerce.number().int().min(32).max(128).default(64),
  /** Comma-separated CIDRs (or bare addresses) of reverse proxies whose Forwarded / X-Forwarded-For is believed. */
  TRUSTED_PROXIES: z.string().default(''),
  /** Unauthenticated routes (scope registry, OpenAPI documents, pages, assets): a bucket per client address; 0 turns it off. */
  PUBLIC_RATE_LIMIT_PER_SECOND: z.coerce.number().min(0).default(20),
  PUBLIC_RATE_LIMIT_BURST: z.coerce.number().int().positive().default(200),
  /** Failed authentications per client address; a request with a valid key never touches this bucket. */
  AUTH_FAILURE_RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(1),
  AUTH_FAILURE_RATE_LIMIT_BURST: z.coerce.number().int().positive().default(30),
  /** One organization's requests across all of its tokens (Surface B and GraphQL, by cost), beside each token's bucket. */
  ORGANIZATION_RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(300),
  ORGANIZATION_RATE_LIMIT_BURST: z.coerce.number().int().positive().default(600),
  /** Active (neither revoked nor expired) tokens one organization may hold, by kind. */
  MAX_SECRET_TOKENS_PER_ORGANIZATION: z.coerce.number().int().positive().default(100),
  MAX_PUBLISHABLE_KEYS_PER_ORGANIZATION: z.coerce.number().int().positive().default(20),
  /** Webhook endpoints (and event destinations, in the same count) one organization may hold. */
  /**
   * Keys that encrypt stored credentials (an event destination's broker URL): `<id>:<base64 of 32 bytes>`,
   * comma-separated, the current key first; the others only decrypt (docs/destinations.md).
   */
  ENCRYPTION_KEYS: z.string().default(''),
  MAX_WEBHOOK_ENDPOINTS_PER_ORGANIZATION: z.coerce.number().int().positive().default(50),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().nonnegative().default(10_000),
  OPERATIONS_WORKER: bool.optional(),
  OPERATIONS_POLL_MS: z.coerce.number().int().positive().default(10_000),
  OPERATIONS_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(DEFAULT_OPERATIONS_CONCURRENCY),
  OPERATION_LEASE_MS: z.coerce.number().int().positive().default(30_000),
  OPERATION_RECHECK_MS: z.coerce.number().int().positive().default(60_000),
  OPERATION_RETRY_BASE_MS: z.coerce.number().int().positive().default(2000),
  OPERATION_RETRY_MAX_MS: z.coerce.number().int().positive().default(300_000),
  OPERATION_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(5),
  /** Active enrollments a program.retier step re-evaluates per transaction. */
  PROGRAM_RETIER_BATCH: z.coerce.number().int().min(1).max(10_000).default(200),
  /** Payouts a payout.run step pays per transaction. */
  PAYOUT_BATCH: z.coerce.number().int().min(1).max(10_000).default(500),
  /** The sandbox payout provider: succeed, fail or hold for review every payout, and how long each payment takes. */
  PAYOUT_SANDBOX_OUTCOME: z.enum(['succeed', 'fail', 'review']).default('succeed'),
  PAYOUT_SANDBOX_DELAY_MS: z.coerce.number().int().min(0).max(30_000).default(0),
  /** A held payout's review: how long it takes and what the provider decides then. */
  PAYOUT_SANDBOX_REVIEW_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  PAYOUT_SANDBOX_REVIEW_OUTCOME: z.enum(['succeed', 'fail']).default('succeed'),
  WEBHOOK_RETRY_SCHEDULE: z.string().default('0s,5s,5m,30m,2h,5h,10h,10h'),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool.optional(),
  WEBHOOK_ALLOW_LOOPBACK: bool.optional(),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().positive().default(256),
  WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().positive().default(64),
  WEBHOOK_POLL_MS: z.coerce.number().int().positive().default(250),
  WEBHOOK_LEASE_MS: z.coerce.number().int().positive().optional(),
  WEBHOOK_WORKER: bool.optional(),
  WEBHOOK_DISABLE_FAILING_AFTER: z
    .string()
    .regex(/^\s*\d+(\.\d+)?\s*(ms|s|m|h|d)?\s*$/, 'WEBHOOK_DISABLE_FAILING_AFTER must be one duration like 5d or 12h (0: never)')
    .default('5d'),
  WEBHOOK_ATTEMPT_RETENTION: z
    .string()
    .regex(/^\s*\d+(\.\d+)?\s*(ms|s|m|h|d)?\s*$/, 'WEBHOOK_ATTEMPT_RETENTION must be one duration like 30d (0: keep forever)')
    .default('30d'),
  WEBHOOK_POLICY_MAX_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  WEBHOOK_POLICY_MAX_RETRIES: z.coerce.number().int().min(0).max(100).default(20),
  WEBHOOK_POLICY_MAX_RETRY_DELAY: z
    .string()
    .regex(/^\s*\d+(\.\d+)?\s*(ms|s|m|h|d)?\s*$/, 'WEBHOOK_POLICY_MAX_RETRY_DELAY must be one duration like 1d or 12h')
    .default('1d'),
  WEBHOOK_POLICY_MAX_RATE_PER_SECOND: z.coerce.number().positive().default(1000),
  METRICS_LISTEN: z
    .string()
    .regex(/^(\[[0-9a-fA-F:.]+\]|[^:\s]+):\d{1,5}$/, 'METRICS_LISTEN must be host:port, e.g. 127.0.0.1:9464')
    .optional(),
  // OpenTelemetry's standard variables: traces go to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, else to
  // OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces (OTLP/HTTP, JSON); neither set, no tracing code is loaded.
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL' }).optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .url({ protocol: /^https?$/, error: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http(s) URL' })
    .optional(),
});

/** Every variable the configuration reads (deployment files are checked against it: test/deploy/systemd.test.ts). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(Env.shape);

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A key of ENCRYPTION_KEYS (src/domain/encryption.ts). */
export interface EncryptionKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** `k2:<base64 of 32 bytes>,k1:<…>` → the keys, current first; a malformed entry throws (the configuration is refused at start). */
export function parseEncryptionKeys(raw: string): EncryptionKey[] {
  const keys = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)
    .map((entry) => {
      const at = entry.indexOf(':');
      const id = entry.slice(0, at);
      const key = Buffer.from(entry.slice(at + 1), 'base64');
      if (at < 1 || !KEY_ID.test(id) || key.length !== 32)
        throw new Error(
          `Invalid configuration:\n  ENCRYPTION_KEYS: each entry is <id>:<base64 of 32 random bytes> (id: letters, digits, _ or -), e.g. k1:$(openssl rand -base64 32)`,
        );
      return { id, key };
    });
  if (new Set(keys.map((k) => k.id)).size !== keys.length)
    throw new Error('Invalid configuration:\n  ENCRYPTION_KEYS: two keys share an id');
  return keys;
}

/** `0s,5s,5m,2h` → milliseconds; a bare number is milliseconds. */
export function parseDurations(list: string, variable = 'WEBHOOK_RETRY_SCHEDULE'): number[] {
  return list.split(',').map((raw) => {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(raw);
    if (!m) throw new Error(`Invalid configuration:\n  ${variable}: '${raw}' is not a duration like 5s, 5m or 2h`);
    return Math.round(Number(m[1]) * DURATION_UNITS[m[2] ?? 'ms']!);
  });
}

/** `10.0.0.0/8, ::1` → the CIDRs, each checked here so a typo fails at start, not on the first forwarded request. */
function parseCidrs(list: string): string[] {
  return list
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean)
    .map((cidr) => {
      try {
        if (cidr.includes('/')) ipaddr.parseCIDR(cidr);
        else ipaddr.parse(cidr);
      } catch {
        throw new Error(`Invalid configuration:\n  TRUSTED_PROXIES: '${cidr}' is not an address or CIDR`);
      }
      return cidr;
    });
}

/** `127.0.0.1:9464` or `[::1]:9464` → host and port. */
function hostPort(value: string): { host: string; port: number } {
  const at = value.lastIndexOf(':');
  const port = Number(value.slice(at + 1));
  if (port > 65535) throw new Error(`Invalid configuration:\n  METRICS_LISTEN: port ${port} is out of range`);
  return { host: value.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port };
}

export type Config = {
  /** Which parts run in this process; OPERATIONS_WORKER / WEBHOOK_WORKER turn one loop off in a role that runs workers. */
  role: Role;
  /** Processes of this role on one port (Node's cluster module, src/runtime/cluster.ts); 1: this process serves alone. */
  processes: number;
  /** PostgreSQL connections of one process's pool (listeners are extra: src/runtime/cluster.ts). */
  poolSize: number;
  /** Connections this machine's processes may open in all; unset, PostgreSQL's max_connections less its reserved ones. */
  connectionBudget?: number;
  host: string;
  port: number;
  publicOrigin?: string;
  /** The pool's PostgreSQL: the database itself, or a pooler in front of it (DATABASE_POOL_MODE says which kind). */
  databaseUrl?: string;
  /**
   * PostgreSQL itself, bypassing any pooler (DATABASE_DIRECT_URL): the LISTEN connections and migrations, which
   * need a session of their own. Unset: they use `databaseUrl`. docs/operating/pgbouncer.md.
   */
  databaseDirectUrl?: string;
  /**
   * How the pool's connections are pooled in front of PostgreSQL: `session` (one backend per connection, the
   * default: named prepared statements) or `transaction` (PgBouncer's transaction mode: unnamed statements only).
   */
  databasePoolMode?: 'session' | 'transaction';
  /** Group commit of the hot write paths (src/db/group-commit.ts): groups in flight (0: off) and members per group. */
  groupCommit?: { groups: number; members: number };
  /** Embedded PGlite directory; `memory://` keeps everything in memory (tests). */
  dataDir: string;
  bootstrap: boolean;
  bootstrapFile: string;
  operatorToken?: string;
  keyBrand: string;
  logLevel: z.infer<typeof Env>['LOG_LEVEL'];
  bodyLimitBytes: number;
  createRateLimit: number;
  createRateWindowSeconds: number;
  /** Surface B and GraphQL: one bucket per platform token, charged by request cost. */
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  /** Surface A and token management: one bucket per platform or user token, 1 per request. */
  surfaceARateLimitPerSecond: number;
  surfaceARateLimitBurst: number;
  /** Per organization across its tokens (Surface B and GraphQL, by cost); a request passes only if both buckets admit it. */
  organizationRateLimit: RateLimit;
  /** Unauthenticated routes: a bucket per client address (src/http/client-address.ts), 1 per request; undefined: off. */
  publicRateLimit?: RateLimit;
  /** Failed authentications (401 `invalid_token`) per client address; a valid key never spends from it nor is refused by it. */
  authFailureRateLimit: RateLimit;
  /** Caps per organization (docs/security.md): active secret tokens, active publishable keys, webhook endpoints (+ event destinations). */
  organizationCaps: { secretTokens: number; publishableKeys: number; webhookEndpoints: number };
  /** How a client's address is found and grouped for every per-address share and bucket. */
  clientAddress: ClientAddressPolicy;
  /** Partner connect (pk_live_ routes): a bucket per publishable key and one per client IP, 1 per request. */
  connectRateLimits: { key: { perSecond: number; burst: number }; ip: { perSecond: number; burst: number } };
  graphqlLimits: GraphQLLimits;
  /** Answer JSON `POST /graphql` without the fetch adapter (src/graphql/direct.ts); off sends every request through Yoga. */
  graphqlDirect: boolean;
  /** Backstop poll of the live event stream, in case a NOTIFY is lost. */
  eventStreamPollMs: number;
  /** Least time between two pulls of the live stream: events of a busy stream go out in batches, one socket write per subscriber per batch. */
  eventStreamBatchMs: number;
  /**
   * Live subscribers from which a busy stream waits the whole batch window; fewer wait proportionally less (a socket
   * write per event costs little when few sockets are written). DEFAULT_STREAM_BATCH_SUBSCRIBERS when left out.
   */
  eventStreamBatchSubscribers?: number;
  /** Events queued for one live subscriber before it is ended as too slow (src/runtime/event-stream.ts). */
  streamMaxPending: number;
  idempotencyTtlSeconds: number;
  shutdownGraceMs: number;
  /** A second listener serving only `GET /metrics`, without the operator token (METRICS_LISTEN): bind it to a private address. */
  metricsListen?: { host: string; port: number };
  /** Where OpenTelemetry traces are posted (OTLP/HTTP JSON); unset, tracing is off and its code never loaded (src/tracing.ts). */
  tracesEndpoint?: string;
  http: HttpLimits;
  operations: OperationsConfig;
  webhook: WebhookConfig;
  /**
   * Keys for credentials stored encrypted (ENCRYPTION_KEYS, src/domain/encryption.ts): the first encrypts, each
   * decrypts its own ciphertexts. Empty or left out: credentials cannot be stored (400 encryption_key_not_configured).
   */
  encryptionKeys?: EncryptionKey[];
  /** Payout runs (src/domain/payout/payout.ts); defaults when left out. */
  payouts?: PayoutsConfig;
  /** The MCP front (src/mcp/, docs/mcp.md); defaults when left out. */
  mcp?: McpConfig;
};

/** What the MCP front shows and to whom. */
export interface McpConfig {
  /** Answer the secrets an action reveals once (MCP_EXPOSE_SECRETS); off, they come back null with a note. */
  exposeSecrets: boolean;
  /** `Host` values `/mcp` answers besides PUBLIC_ORIGIN's and the loopback names of its port (MCP_ALLOWED_HOSTS). */
  allowedHosts: string[];
}

/** How payout runs pay: payouts per transaction, and what the sandbox payout provider answers. */
export interface PayoutsConfig {
  /** Payouts a payout.run step pays per transaction (DEFAULT_PAY_BATCH when left out). */
  batch?: number;
  sandbox?: {
    /** succeed (default), fail, or review: the provider accepts every payout but holds it for a manual review. */
    outcome?: 'succeed' | 'fail' | 'review';
    /** Each payment takes this long (to observe or interrupt a running run). */
    delayMs?: number;
    /** Entities (ent_ ids) whose payouts fail whatever `outcome` says. */
    failEntities?: string[];
    /** Entities (ent_ ids) whose payouts are held for review whatever `outcome` says (failEntities win). */
    reviewEntities?: string[];
    /**
     * A held payout's review: decided `afterMs` (default 60 s) of the clock after it entered review, then settled
     * (outcome succeed, the default) or failed. Tests move the injected clock past it.
     */
    review?: { afterMs?: number; outcome?: 'succeed' | 'fail' };
  };
}

export interface WebhookConfig {
  /** Delay before each attempt (the first is usually 0); its length is the number of attempts. */
  retryScheduleMs: number[];
  timeoutMs: number;
  /** Deliver to private, link-local and metadata addresses (never in multi-tenant production). */
  allowPrivateNetworks: boolean;
  /**
   * Deliver to URLs that name a loopback host (localhost, 127.0.0.1, [::1]: the spec's URL rule admits them over
   * http). Default on with the embedded database (development), off on PostgreSQL (a deployment): a loopback
   * target is one of the server's own local services, and its reply would be shown to the tenant.
   */
  allowLoopback: boolean;
  /** In-flight attempts per process, overall. */
  concurrency: number;
  /** Ceiling of an endpoint's adaptive in-flight limit per process (it starts at 4, or this if lower; see concurrency.ts). */
  endpointConcurrency: number;
  pollMs: number;
  /** How long a leased delivery stays hidden from other workers; must exceed the timeout. */
  leaseMs: number;
  /** Run the delivery worker in this process. */
  worker: boolean;
  /** An endpoint whose every attempt has failed for this long is disabled (`failing`); 0 never disables. */
  disableFailingAfterMs: number;
  /** Attempts older than this are pruned by the maintenance loop (the deliveries and the feed stay); 0 keeps them forever. */
  attemptRetentionMs: number;
  /** What an endpoint's own policy may ask for (src/domain/webhook/policy.ts); `max_in_flight` is bounded by `endpointConcurrency`. */
  policyBounds: WebhookPolicyBounds;
}

export interface WebhookPolicyBounds {
  maxTimeoutMs: number;
  /** Entries of an endpoint's `retry_schedule` (retries after the first attempt). */
  maxRetries: number;
  maxRetryDelayMs: number;
  maxRatePerSecond: number;
}

/** What one GraphQL document may ask for; anything beyond is refused before execution. */
export interface GraphQLLimits {
  maxDepth: number;
  maxAliases: number;
  /** Lexical tokens of the document, checked while parsing. */
  maxTokens: number;
  maxDirectives: number;
  /** Rate-limit tokens one operation may cost (see requestCost); at most the Surface B burst, so it can ever pass. */
  maxCost: number;
}

export interface RateLimit {
  perSecond: number;
  burst: number;
}

/** src/http/client-address.ts: which peers are proxies whose forwarding headers count, and how IPv6 addresses group. */
export interface ClientAddressPolicy {
  /** CIDRs as written (`10.0.0.0/8`, `::1/128`; a bare address is a /32 or /128). */
  trustedProxies: string[];
  ipv6PrefixLength: number;
}

/** How the HTTP server treats slow, idle and numerous clients (src/http/server-limits.ts). */
export interface HttpLimits {
  /** A request's headers must arrive within this time of its first byte. */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this time. */
  requestTimeoutMs: number;
  /** A plain request or response with no byte either way for this long is closed (WebSocket and SSE streams are exempt). */
  idleTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long; longer than clients' pools keep theirs. */
  keepAliveTimeoutMs: number;
  /** Open connections serving plain requests; more are refused. */
  maxConnections: number;
  /** Open WebSocket and SSE streams (live subscribers), a budget of their own. */
  maxStreams: number;
  /** One remote address's (IPv6: prefix's) share of maxConnections; trusted proxies are exempt. */
  maxConnectionsPerAddress: number;
  /** One remote address's share of maxStreams. */
  maxStreamsPerAddress: number;
  /** The listen backlog: connections completed by the kernel, waiting to be accepted (a burst of connects). */
  listenBacklog: number;
}

/** The operations engine (src/domain/operation/engine.ts). */
export interface OperationsConfig {
  /** Run the operations worker in this process (tests drive it with drain() instead). */
  worker: boolean;
  /** Backstop tick: how often the worker looks for due operations that no wake-up announced (a lost NOTIFY, a recheck time, an expired lease). */
  pollMs: number;
  /** Operations this process's worker runs at once (DEFAULT_OPERATIONS_CONCURRENCY when a hand-built config leaves it out). */
  concurrency?: number;
  /** How long a claimed operation stays hidden from other workers without a heartbeat. */
  leaseMs: number;
  /** Backstop: a waiting operation rechecks its blocker this long after it last did, woken or not. */
  recheckMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Active enrollments a program.retier step re-evaluates per transaction (DEFAULT_RETIER_BATCH when a hand-built config leaves it out). */
  retierBatch?: number;
  maxAttempts: number;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  for (const [name, burst] of [
    ['RATE_LIMIT_BURST', e.RATE_LIMIT_BURST],
    ['ORGANIZATION_RATE_LIMIT_BURST', e.ORGANIZATION_RATE_LIMIT_BURST],
  ] as const) {
    if (e.GRAPHQL_MAX_COST > burst) {
      throw new Error(
        `Invalid configuration:\n  GRAPHQL_MAX_COST: ${e.GRAPHQL_MAX_COST} exceeds ${name} (${burst}); such a query could never be admitted`,
      );
    }
  }
  const dataDir = e.DATA_DIR === 'memory://' ? e.DATA_DIR : resolve(e.DATA_DIR);
  // Defaults that depend on the database follow the one the server will run on, an override included.
  const embedded = !('databaseUrl' in overrides ? overrides.databaseUrl : e.DATABASE_URL);
  const role = overrides.role ?? e.PLATFORM_ROLE;
  if (role !== 'all' && embedded) {
    throw new Error(
      `Invalid configuration:\n  PLATFORM_ROLE: '${role}' needs DATABASE_URL (PostgreSQL); the embedded database belongs to one process, which runs as 'all'`,
    );
  }
  const processes = e.PLATFORM_API_PROCESSES === 'auto' ? availableParallelism() : Number(e.PLATFORM_API_PROCESSES);
  if (processes > 1 && embedded) {
    throw new Error(
      `Invalid configuration:\n  PLATFORM_API_PROCESSES: ${e.PLATFORM_API_PROCESSES}${e.PLATFORM_API_PROCESSES === 'auto' ? ` (${processes} cores)` : ''} needs DATABASE_URL (PostgreSQL); the embedded database belongs to one process`,
    );
  }
  const databaseUrl = 'databaseUrl' in overrides ? overrides.databaseUrl : e.DATABASE_URL || undefined;
  const databaseDirectUrl = 'databaseDirectUrl' in overrides ? overrides.databaseDirectUrl : e.DATABASE_DIRECT_URL || undefined;
  const databasePoolMode = overrides.databasePoolMode ?? e.DATABASE_POOL_MODE;
  // A transaction pooler hands each transaction to any backend: LISTEN there would hear nothing, and migrations'
  // session lock would not hold. Refused here rather than found out as missed wake-ups.
  if (databaseUrl && databasePoolMode === 'transaction' && !databaseDirectUrl) {
    throw new Error(
      `Invalid configuration:\n  DATABASE_POOL_MODE: 'transaction' needs DATABASE_DIRECT_URL (PostgreSQL itself, not the pooler) for LISTEN and migrations`,
    );
  }
  return {
    role,
    processes,
    poolSize: e.DATABASE_POOL_SIZE,
    connectionBudget: e.DATABASE_CONNECTION_BUDGET,
    host: e.HOST,
    port: e.PORT,
    publicOrigin: e.PUBLIC_ORIGIN,
    databaseUrl: e.DATABASE_URL || undefined,
    databaseDirectUrl: e.DATABASE_DIRECT_URL || undefined,
    databasePoolMode: e.DATABASE_POOL_MODE,
    groupCommit: { groups: e.GROUP_COMMIT_GROUPS, members: e.GROUP_COMMIT_MEMBERS },
    dataDir,
    bootstrap: e.BOOTSTRAP ?? embedded,
    bootstrapFile: resolve(e.BOOTSTRAP_FILE ?? join(dataDir === 'memory://' ? '.data' : dataDir, 'dev-credentials.json')),
    operatorToken: e.OPERATOR_TOKEN,
    keyBrand: e.KEY_BRAND,
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    createRateLimit: e.CREATE_RATE_LIMIT,
    createRateWindowSeconds: e.CREATE_RATE_WINDOW_SECONDS,
    rateLimitPerSecond: e.RATE_LIMIT_PER_SECOND,
    rateLimitBurst: e.RATE_LIMIT_BURST,
    surfaceARateLimitPerSecond: e.SURFACE_A_RATE_LIMIT_PER_SECOND,
    surfaceARateLimitBurst: e.SURFACE_A_RATE_LIMIT_BURST,
    organizationRateLimit: { perSecond: e.ORGANIZATION_RATE_LIMIT_PER_SECOND, burst: e.ORGANIZATION_RATE_LIMIT_BURST },
    publicRateLimit:
      e.PUBLIC_RATE_LIMIT_PER_SECOND > 0 ? { perSecond: e.PUBLIC_RATE_LIMIT_PER_SECOND, burst: e.PUBLIC_RATE_LIMIT_BURST } : undefined,
    authFailureRateLimit: { perSecond: e.AUTH_FAILURE_RATE_LIMIT_PER_SECOND, burst: e.AUTH_FAILURE_RATE_LIMIT_BURST },
    organizationCaps: {
      secretTokens: e.MAX_SECRET_TOKENS_PER_ORGANIZATION,
      publishableKeys: e.MAX_PUBLISHABLE_KEYS_PER_ORGANIZATION,
      webhookEndpoints: e.MAX_WEBHOOK_ENDPOINTS_PER_ORGANIZATION,
    },
    clientAddress: { trustedProxies: parseCidrs(e.TRUSTED_PROXIES), ipv6PrefixLength: e.IPV6_ADDRESS_PREFIX },
    connectRateLimits: {
      key: { perSecond: e.CONNECT_KEY_RATE_LIMIT_PER_SECOND, burst: e.CONNECT_KEY_RATE_LIMIT_BURST },
      ip: { perSecond: e.CONNECT_IP_RATE_LIMIT_PER_SECOND, burst: e.CONNECT_IP_RATE_LIMIT_BURST },
    },
    graphqlLimits: {
      maxDepth: e.GRAPHQL_MAX_DEPTH,
      maxAliases: e.GRAPHQL_MAX_ALIASES,
      maxTokens: e.GRAPHQL_MAX_TOKENS,
      maxDirectives: e.GRAPHQL_MAX_DIRECTIVES,
      maxCost: e.GRAPHQL_MAX_COST,
    },
    graphqlDirect: e.GRAPHQL_DIRECT ?? true,
    eventStreamPollMs: e.EVENT_STREAM_POLL_MS,
    eventStreamBatchMs: e.EVENT_STREAM_BATCH_MS,
    eventStreamBatchSubscribers: e.EVENT_STREAM_BATCH_SUBSCRIBERS,
    streamMaxPending: e.STREAM_MAX_PENDING,
    idempotencyTtlSeconds: e.IDEMPOTENCY_TTL_SECONDS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    metricsListen: e.METRICS_LISTEN ? hostPort(e.METRICS_LISTEN) : undefined,
    tracesEndpoint:
      e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
      (e.OTEL_EXPORTER_OTLP_ENDPOINT ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined),
    http: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: Math.max(e.HTTP_REQUEST_TIMEOUT_MS, e.HTTP_HEADERS_TIMEOUT_MS),
      idleTimeoutMs: e.HTTP_IDLE_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.HTTP_MAX_CONNECTIONS,
      maxStreams: e.HTTP_MAX_STREAMS,
      maxConnectionsPerAddress: e.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
      maxStreamsPerAddress: e.HTTP_MAX_STREAMS_PER_ADDRESS,
      listenBacklog: e.HTTP_LISTEN_BACKLOG,
    },
    operations: {
      worker: e.OPERATIONS_WORKER ?? true,
      pollMs: e.OPERATIONS_POLL_MS,
      concurrency: e.OPERATIONS_CONCURRENCY,
      leaseMs: e.OPERATION_LEASE_MS,
      recheckMs: e.OPERATION_RECHECK_MS,
      retryBaseMs: e.OPERATION_RETRY_BASE_MS,
      retryMaxMs: e.OPERATION_RETRY_MAX_MS,
      maxAttempts: e.OPERATION_MAX_ATTEMPTS,
      retierBatch: e.PROGRAM_RETIER_BATCH,
    },
    encryptionKeys: parseEncryptionKeys(e.ENCRYPTION_KEYS),
    mcp: {
      exposeSecrets: e.MCP_EXPOSE_SECRETS ?? false,
      allowedHosts: e.MCP_ALLOWED_HOSTS.split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    },
    payouts: {
      batch: e.PAYOUT_BATCH,
      sandbox: {
        outcome: e.PAYOUT_SANDBOX_OUTCOME,
        delayMs: e.PAYOUT_SANDBOX_DELAY_MS,
        review: { afterMs: e.PAYOUT_SANDBOX_REVIEW_MS, outcome: e.PAYOUT_SANDBOX_REVIEW_OUTCOME },
      },
    },
    webhook: {
      retryScheduleMs: parseDurations(e.WEBHOOK_RETRY_SCHEDULE),
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      allowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS ?? false,
      allowLoopback: e.WEBHOOK_ALLOW_LOOPBACK ?? embedded,
      concurrency: e.WEBHOOK_CONCURRENCY,
      endpointConcurrency: e.WEBHOOK_ENDPOINT_CONCURRENCY,
      pollMs: e.WEBHOOK_POLL_MS,
      leaseMs: e.WEBHOOK_LEASE_MS ?? e.WEBHOOK_TIMEOUT_MS + 15_000,
      worker: e.WEBHOOK_WORKER ?? true,
      disableFailingAfterMs: parseDurations(e.WEBHOOK_DISABLE_FAILING_AFTER, 'WEBHOOK_DISABLE_FAILING_AFTER')[0]!,
      attemptRetentionMs: parseDurations(e.WEBHOOK_ATTEMPT_RETENTION, 'WEBHOOK_ATTEMPT_RETENTION')[0]!,
      policyBounds: {
        maxTimeoutMs: e.WEBHOOK_POLICY_MAX_TIMEOUT_MS,
        maxRetries: e.WEBHOOK_POLICY_MAX_RETRIES,
        maxRetryDelayMs: parseDurations(e.WEBHOOK_POLICY_MAX_RETRY_DELAY, 'WEBHOOK_POLICY_MAX_RETRY_DELAY')[0]!,
        maxRatePerSecond: e.WEBHOOK_POLICY_MAX_RATE_PER_SECOND,
      },
    },
    ...overrides,
  };
}
