import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/**
 * Where the CLI's credentials come from, per field, first hit wins:
 * 1. flags (`--origin`, `--api-key`, `--user-token`, `--operator-token`), then the profile `--profile` names;
 * 2. environment (`PLATFORM_ORIGIN`, `PLATFORM_API_KEY`, `PLATFORM_USER_TOKEN`, `PLATFORM_OPERATOR_TOKEN`);
 * 3. the profile `PLATFORM_PROFILE` names, else the default profile (`platform login` saves them);
 * 4. the dev credentials file that `npm start` writes on bootstrap
 *    (`--credentials`, else `PLATFORM_CREDENTIALS`, else `BOOTSTRAP_FILE`,
 *    else `$DATA_DIR/dev-credentials.json`, default `./.data/dev-credentials.json`).
 */
export interface CredentialFlags {
  origin?: string;
  apiKey?: string;
  userToken?: string;
  operatorToken?: string;
  credentials?: string;
  profile?: string;
}

export interface Credentials {
  origin: string;
  apiKey?: string;
  userToken?: string;
  operatorToken?: string;
  /** The dev credentials file, when one was read. */
  file?: string;
  /** The saved profile in use, when one was. */
  profile?: string;
  /** Brands listed in that file, to resolve a slug to an id. */
  brands: { id: string; slug: string }[];
}

/** The JSON the bootstrap writes (docs/operating/configuration.md shows it). */
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
  // The profile named by the flag ranks with the flags; the one PLATFORM_PROFILE names, or the default, below the environment.
  const saved = readProfiles(profilesFile(env));
  const named = flags.profile ?? env.PLATFORM_PROFILE;
  const profileName = named ?? saved.default_profile;
  const profile = named
    ? profileNamed(saved, named, flags.profile ? '--profile' : 'PLATFORM_PROFILE')
    : profileName
      ? saved.profiles[profileName]
      : undefined;
  const high = flags.profile ? profile : undefined;
  const low = flags.profile ? undefined : profile;
  return {
    origin: (flags.origin ?? high?.origin ?? env.PLATFORM_ORIGIN ?? low?.origin ?? dev.api_origin ?? DEFAULT_ORIGIN).replace(/\/+$/, ''),
    apiKey: flags.apiKey ?? high?.api_key ?? env.PLATFORM_API_KEY ?? low?.api_key ?? dev.platform_token?.secret,
    userToken: flags.userToken ?? env.PLATFORM_USER_TOKEN ?? dev.user_token,
    operatorToken: flags.operatorToken ?? env.PLATFORM_OPERATOR_TOKEN ?? dev.operator_token,
    file,
    profile: profile ? profileName : undefined,
    brands: dev.brands ?? [],
  };
}

/** A credential the command needs, or a usage error that says where to put it. */
export function required(value: string | undefined, what: string, flag: string, envName: string): string {
  if (value) return value;
  throw new UsageError(
    `No ${what}: pass ${flag}, set ${envName}${flag === '--api-key' ? ', run `platform login`' : ''}, or run \`npm start\` once so ./.data/dev-credentials.json exists`,
  );
}

/** Wrong invocation or missing credentials: exit code 2. */
export class UsageError extends Error {}

/**
 * Saved logins, as the Stripe and Svix CLIs keep them: `platform login` checks a key, then stores it with its origin
 * as a named profile in `$XDG_CONFIG_HOME/platform/config.json` (else `~/.config/platform/config.json`). The file
 * holds secrets, so it is written mode 0600 in a 0700 directory, and a file that its group or others may read or
 * write is refused rather than used (as ssh refuses a readable private key).
 */
export interface Profile {
  origin: string;
  api_key: string;
  /** The organization the key belongs to, as `/smoke` named it at login. */
  org_slug?: string;
}

export interface ProfilesFile {
  default_profile?: string;
  profiles: Record<string, Profile>;
}

export function profilesFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'platform', 'config.json');
}

/** The saved profiles; none when the file does not exist. */
export function readProfiles(file: string): ProfilesFile {
  if (!existsSync(file)) return { profiles: {} };
  const mode = statSync(file).mode & 0o777;
  if (process.platform !== 'win32' && mode & 0o077)
    throw new UsageError(
      `${file} holds API keys but its mode is ${mode.toString(8).padStart(4, '0')} (group or others have access): run \`chmod 600 ${file}\`, or delete it and log in again`,
    );
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<ProfilesFile>;
    return { ...parsed, profiles: parsed.profiles ?? {} };
  } catch {
    throw new UsageError(`${file} is not JSON: fix it, or delete it and log in again`);
  }
}

/** Writes the file whole (a temporary file renamed over it), mode 0600 whatever the umask. */
export function writeProfiles(file: string, profiles: ProfilesFile): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(profiles, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/** A profile by name, or a usage error that lists the saved ones. */
export function profileNamed(saved: ProfilesFile, name: string, from: string): Profile {
  const profile = Object.hasOwn(saved.profiles, name) ? saved.profiles[name] : undefined;
  if (profile) return profile;
  const names = Object.keys(saved.profiles);
  throw new UsageError(
    `No profile '${name}' (${from}): ${names.length ? `saved profiles are ${names.join(', ')}` : 'none is saved'}; \`platform login --profile ${name}\` saves it`,
  );
}
