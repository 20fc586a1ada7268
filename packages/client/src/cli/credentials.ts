import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Where the CLI's credentials come from, per field, first hit wins:
 * 1. flags (`--origin`, `--api-key`, `--user-token`, `--operator-token`);
 * 2. environment (`PLATFORM_ORIGIN`, `PLATFORM_API_KEY`, `PLATFORM_USER_TOKEN`,
 *    `PLATFORM_OPERATOR_TOKEN`);
 * 3. the dev credentials file that `npm start` writes on bootstrap
 *    (`--credentials`, else `PLATFORM_CREDENTIALS`, else `BOOTSTRAP_FILE`,
 *    else `$DATA_DIR/dev-credentials.json`, default `./.data/dev-credentials.json`).
 */
export interface CredentialFlags {
  origin?: string;
  apiKey?: string;
  userToken?: string;
  operatorToken?: string;
  credentials?: string;
}

export interface Credentials {
  origin: string;
  apiKey?: string;
  userToken?: string;
  operatorToken?: string;
  /** The dev credentials file, when one was read. */
  file?: string;
  /** Brands listed in that file, to resolve a slug to an id. */
  brands: { id: string; slug: string }[];
}

/** The JSON the bootstrap writes (see issue 2 and the README). */
interface DevCredentialsFile {
  api_origin?: string;
  operator_token?: string;
  user_token?: string;
  platform_token?: { secret?: string };
  brands?: { id: string; slug: string }[];
}

export const DEFAULT_ORIGIN = 'http://127.0.0.1:4000';

export function credentialsFile(flags: CredentialFlags, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(
    flags.credentials ?? env.PLATFORM_CREDENTIALS ?? env.BOOTSTRAP_FILE ?? join(env.DATA_DIR ?? '.data', 'dev-credentials.json'),
  );
}

export function resolveCredentials(flags: CredentialFlags, env: NodeJS.ProcessEnv = process.env): Credentials {
  env = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')); // an empty variable counts as unset
  const path = credentialsFile(flags, env);
  let dev: DevCredentialsFile = {};
  let file: string | undefined;
  if (existsSync(path)) {
    try {
      dev = JSON.parse(readFileSync(path, 'utf8')) as DevCredentialsFile;
      file = path;
    } catch {
      throw new UsageError(`The credentials file ${path} is not JSON`);
    }
  }
  return {
    origin: (flags.origin ?? env.PLATFORM_ORIGIN ?? dev.api_origin ?? DEFAULT_ORIGIN).replace(/\/+$/, ''),
    apiKey: flags.apiKey ?? env.PLATFORM_API_KEY ?? dev.platform_token?.secret,
    userToken: flags.userToken ?? env.PLATFORM_USER_TOKEN ?? dev.user_token,
    operatorToken: flags.operatorToken ?? env.PLATFORM_OPERATOR_TOKEN ?? dev.operator_token,
    file,
    brands: dev.brands ?? [],
  };
}

/** A credential the command needs, or a usage error that says where to put it. */
export function required(value: string | undefined, what: string, flag: string, envName: string): string {
  if (value) return value;
  throw new UsageError(`No ${what}: pass ${flag}, set ${envName}, or run \`npm start\` once so ./.data/dev-credentials.json exists`);
}

/** Wrong invocation or missing credentials: exit code 2. */
export class UsageError extends Error {}
