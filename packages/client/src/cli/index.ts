/**
 * The `platform` command line as a library (`@platform-api/client/cli`), for
 * a program that adds its own commands: register them on `program`, call
 * `registerUserCommands()`, then `runProgram()`. The package's own bin
 * (main.ts) does just the last two; the server's CLI adds start, migrate and
 * bootstrap first.
 */
export { registerUserCommands } from './commands.ts';
export { required } from './credentials.ts';
export { EXIT, print } from './output.ts';
export { creds, program, run, runProgram, type Globals } from './program.ts';
