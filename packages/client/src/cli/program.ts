import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { OperatorClient, PlatformClient, TokenClient } from '../index.ts';
import { required, resolveCredentials, type CredentialFlags } from './credentials.ts';
import { EXIT, exitCodeFor, reportError, type OutputOptions } from './output.ts';

/** The `platform` program, its global options, and what every command body shares. */
export type Globals = CredentialFlags & OutputOptions;

export const program = new Command('platform')
  .description('Talk to the platform API from the terminal')
  .option('--json', 'print results (and errors, on stderr) as JSON for scripts')
  .option('--origin <url>', 'API origin (env PLATFORM_ORIGIN; else the profile, the dev credentials file, http://127.0.0.1:4000)')
  .option('--api-key <key>', 'platform token sk_<brand>_live_... (env PLATFORM_API_KEY; else the profile `platform login` saved)')
  .option('--profile <name>', 'use this saved profile; it outranks the environment (env PLATFORM_PROFILE ranks below it)')
  .option('--user-token <token>', 'dashboard user token ut_... (env PLATFORM_USER_TOKEN)')
  .option('--operator-token <token>', 'operator token (env PLATFORM_OPERATOR_TOKEN)')
  .option('--credentials <file>', 'dev credentials file (env PLATFORM_CREDENTIALS; default ./.data/dev-credentials.json)')
  .showHelpAfterError()
  .exitOverride();

/** Runs a command body; maps any failure to a message and an exit code. */
export function run<A extends unknown[]>(body: (g: Globals, ...args: A) => Promise<number | void>) {
  return async (...args: A) => {
    const g = program.opts<Globals>();
    try {
      process.exitCode = (await body(g, ...args)) ?? EXIT.ok;
    } catch (err) {
      reportError(g, err);
      process.exitCode = exitCodeFor(err);
    }
  };
}

export const creds = (g: Globals) => resolveCredentials(g);
export const platformClient = (g: Globals) => {
  const c = creds(g);
  return {
    client: new PlatformClient({ apiKey: required(c.apiKey, 'platform token', '--api-key', 'PLATFORM_API_KEY'), origin: c.origin }),
    ...c,
  };
};
export const tokenClient = (g: Globals) => {
  const c = creds(g);
  return new TokenClient({
    userToken: required(c.userToken, 'user token', '--user-token', 'PLATFORM_USER_TOKEN'),
    dashboardBaseUrl: c.origin,
  });
};
export const operatorClient = (g: Globals) => {
  const c = creds(g);
  return new OperatorClient({
    operatorToken: required(c.operatorToken, 'operator token', '--operator-token', 'PLATFORM_OPERATOR_TOKEN'),
    origin: c.origin,
  });
};

/** `--version`: this package's version. */
program.version(
  (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version,
  '-V, --version',
  'print the version',
);

/** Parses `argv` and runs the command; every outcome ends as `process.exitCode` (see EXIT). */
export async function runProgram(argv: readonly string[] = process.argv): Promise<void> {
  try {
    await program.parseAsync(argv);
  } catch (err) {
    // commander's own exits (help, version, usage errors) under exitOverride.
    const e = err as { code?: string; exitCode?: number };
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.help' || e.code === 'commander.version') process.exitCode = EXIT.ok;
    else if (typeof e.exitCode === 'number') process.exitCode = EXIT.usage;
    else {
      reportError(program.opts<Globals>(), err);
      process.exitCode = exitCodeFor(err);
    }
  }
}
