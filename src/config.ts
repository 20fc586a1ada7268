import { resolve, join } from 'node:path';
import { z } from 'zod';

/**
 * All configuration, read once from the environment. Defaults make
 * `npm start` work on a fresh clone (embedded PGlite under ./.data).
 */
const bool = z
  .enum(['0', '1', 'true', 'false', ''])
  .transform((v) => v === '1' || v === 'true');

const Env = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  PUBLIC_ORIGIN: z.string().url().optional(),
  DATABASE_URL: z.string().optional(),
  DATA_DIR: z.string().default('.data'),
  BOOTSTRAP_FILE: z.string().optional(),
  BOOTSTRAP: bool.optional(),
  OPERATOR_TOKEN: z.string().min(16).optional(),
  KEY_BRAND: z
    .string()
    .regex(/^[a-z][a-z0-9]{0,15}$/, 'KEY_BRAND must be lowercase alphanumeric')
    .default('platform'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(1024 * 1024),
  CREATE_RATE_LIMIT: z.coerce.number().int().positive().default(150),
  CREATE_RATE_WINDOW_SECONDS: z.coerce.number().int().positive().default(3600),
  RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(100),
  RATE_LIMIT_BURST: z.coerce.number().int().positive().default(200),
  IDEMPOTENCY_TTL_SECONDS: z.coerce.number().int().positive().default(24 * 3600),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().nonnegative().default(10_000),
});

export type Config = {
  host: string;
  port: number;
  publicOrigin?: string;
  databaseUrl?: string;
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
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  idempotencyTtlSeconds: number;
  shutdownGraceMs: number;
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const dataDir = e.DATA_DIR === 'memory://' ? e.DATA_DIR : resolve(e.DATA_DIR);
  const embedded = !e.DATABASE_URL;
  return {
    host: e.HOST,
    port: e.PORT,
    publicOrigin: e.PUBLIC_ORIGIN,
    databaseUrl: e.DATABASE_URL || undefined,
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
    idempotencyTtlSeconds: e.IDEMPOTENCY_TTL_SECONDS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    ...overrides,
  };
}
