import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { createPersistentDatabase, onPostgres, type PersistentDatabase } from '../support/kit.ts';
import { type ServerProcess, spawnServer } from '../support/ops-process.ts';
import { bashSession } from './bash-session.ts';
import { type DocBlock, docBlocks, drift, withPrintedOutputs } from './readme-blocks.ts';
import { docPages, ROOT } from './doc-pages.ts';

/**
 * README.md and every page under docs/ run as written (convention in readme-blocks.ts and in
 * docs/operating/testing.md): one fresh `npm start` server (the real process, default configuration, on a copy
 * of the migrated template so it starts in seconds) serves every page in the docs map's order, and each page's
 * console and sh blocks run in order in a bash session of its own, from a directory whose
 * `.data/dev-credentials.json` is the one that server's bootstrap wrote and where `npx platform` is this
 * repository's CLI, as in a reader's checkout. A page sets up its own shell, so it runs alone as well; what
 * earlier pages did to the server (events appended, wallets spent) shows in later pages' outputs.
 *
 * On PGlite the server runs exactly as the README shows; on PostgreSQL (TEST_DATABASE_URL) with the environment
 * docs/operating/postgresql.md gives it (`BOOTSTRAP=1`, and `WEBHOOK_ALLOW_LOOPBACK=1` for the delivery
 * examples), and `/readyz`, the one answer that names the database, is read as the embedded one. A block marked
 * `requires: postgres` runs only there, with `DATABASE_URL` naming a database of its own; elsewhere it is
 * skipped with a printed reason.
 */
const COMMAND_TIMEOUT_MS = 60_000;
/** DOCS_UPDATE=1: after the run, rewrite each page's shown outputs with what the commands printed (review the diff). */
const UPDATE = process.env.DOCS_UPDATE === '1';

/** The brokers the run started, for `requires: rabbitmq|nats|redis` blocks (test/support/brokers-setup.ts). */
const brokers = inject('brokers');

const pages = docPages().map((page) => ({ page, blocks: docBlocks(readFileSync(join(ROOT, page), 'utf8')) }));

describe('the docs', () => {
  let database: PersistentDatabase;
  let server: ServerProcess;
  let cwd: string;
  let credentials: string;
  /** A second database for `requires: postgres` blocks (made on first use, PostgreSQL runs only). */
  let own: PersistentDatabase | undefined;

  beforeAll(async () => {
    database = await createPersistentDatabase();
    cwd = join(database.dir, 'session');
    mkdirSync(join(cwd, 'node_modules', '.bin'), { recursive: true });
    // `npx platform` resolves this repository's CLI, as it does in a checkout.
    symlinkSync(join(ROOT, 'bin', 'platform.mjs'), join(cwd, 'node_modules', '.bin', 'platform'));
    // A `file:` block's program imports the client as a project that installed it does, and runs with `npx tsx`.
    mkdirSync(join(cwd, 'node_modules', '@platform-api'));
    symlinkSync(join(ROOT, 'packages', 'client'), join(cwd, 'node_modules', '@platform-api', 'client'));
    symlinkSync(realpathSync(join(ROOT, 'node_modules', '.bin', 'tsx')), join(cwd, 'node_modules', '.bin', 'tsx'));
    credentials = join(cwd, '.data', 'dev-credentials.json');
    // On PostgreSQL, the environment docs/operating/postgresql.md shows (bootstrap on, loopback webhooks allowed).
    const db: Record<string, string> = database.databaseUrl
      ? { DATABASE_URL: database.databaseUrl, BOOTSTRAP: '1', WEBHOOK_ALLOW_LOOPBACK: '1' }
      : { DATA_DIR: database.dataDir };
    // Seconds on a quiet machine; a loaded one has taken minutes to load the database and start the server.
    server = await spawnServer({ PORT: '0', BOOTSTRAP_FILE: credentials, ...db }, 180_000);
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
    await own?.drop();
  });

  test('every marker names a reason, a known server or a file, and sits on the line before a block it applies to', () => {
    for (const { page } of pages) {
      const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
      const markers = lines.flatMap((text, i) => (/^<!--.*(docs|readme)-test/.test(text) ? [i] : []));
      for (const i of markers) {
        expect(lines[i], `${page} line ${i + 1}`).toMatch(
          /^<!-- docs-test: (skip: \S.*|requires: (postgres|rabbitmq|nats|redis)|file: [\w.-]+) -->$/,
        );
        expect(lines[i + 1], `${page} line ${i + 2}`).toMatch(lines[i]!.includes('file:') ? /^```\w+$/ : /^```(console|sh)$/);
      }
    }
  });

  test('the credentials file has the shape docs/operating/configuration.md shows', () => {
    const page = readFileSync(join(ROOT, 'docs/operating/configuration.md'), 'utf8');
    const sample = JSON.parse(/\n```json\n([\s\S]*?)\n```/.exec(page)![1]!);
    expect(shape(JSON.parse(readFileSync(credentials, 'utf8')))).toEqual(shape(sample));
  });

  for (const { page, blocks } of pages.filter((p) => p.blocks.some((b) => !b.skip))) {
    test(`${page}: its console and sh blocks run in order and print what it shows`, async () => {
      // NODE_PATH: the session runs outside the repository; "Partner connect" mints a handoff with this repository's `jose`.
      const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LANG: 'C.UTF-8', NODE_PATH: join(ROOT, 'node_modules') };
      const shell = bashSession(cwd, { ...env, npm_config_update_notifier: 'false' });
      const failures: string[] = [];
      const printed = new Map<number, string>();
      try {
        session: for (const block of blocks.filter((b) => !b.skip)) {
          if (block.file) {
            writeFileSync(join(cwd, block.file.name), block.file.text);
            continue;
          }
          if (block.requires === 'postgres' && !onPostgres()) {
            console.log(`${page} line ${block.line}: skipped, requires postgres (runs where TEST_DATABASE_URL is set, as in .ci/run)`);
            continue;
          }
          const broker = block.requires && block.requires !== 'postgres' ? block.requires : undefined;
          if (broker && !brokers[broker]) {
            console.log(`${page} line ${block.line}: skipped, requires ${broker} (its package is not installed here; CI installs it)`);
            continue;
          }
          if (block.requires === 'postgres') {
            own ??= await createPersistentDatabase();
            await shell.run(`export DATABASE_URL='${own.databaseUrl}'`, COMMAND_TIMEOUT_MS);
          }
          if (broker) await shell.run(`export ${broker.toUpperCase()}_URL='${brokers[broker]}'`, COMMAND_TIMEOUT_MS);
          for (const command of block.commands) {
            const ran = await shell.run(command.command, COMMAND_TIMEOUT_MS).catch((e: Error) => e);
            if (!(ran instanceof Error)) printed.set(command.line, ran.output);
            const problem = ran instanceof Error ? ran.message : drift(command, onPostgres() ? asIfEmbedded(ran) : ran, server.origin);
            if (problem) failures.push(`${where(page, block, command.line)}\n$ ${command.command}\n${problem}`);
            if (ran instanceof Error) break session; // the shell is still busy with it
          }
          if (block.requires) await shell.run(`unset ${broker ? `${broker.toUpperCase()}_URL` : 'DATABASE_URL'}`, COMMAND_TIMEOUT_MS);
        }
      } finally {
        shell.close();
      }
      if (UPDATE) writeFileSync(join(ROOT, page), withPrintedOutputs(readFileSync(join(ROOT, page), 'utf8'), printed));
      expect(failures.join('\n\n'), `${failures.length} command(s) of ${page} drifted`).toBe('');
    }, 300_000); // a few seconds a page (the README's tour waits on an operation); generous for a loaded CI machine
  }
});

const where = (page: string, block: DocBlock, line: number) =>
  `${page}: block ${block.index} (line ${block.line}), command at line ${line}:`;

/** The keys of a JSON value, recursively (arrays by their first element): what a sample must agree on with the real thing. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return [shape(value[0])];
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .map(([k, v]) => [k, shape(v)])
        .sort(),
    );
  return typeof value;
}

/** The one answer that names the database: the docs show the embedded one. */
const asIfEmbedded = (ran: { output: string; exitCode: number }) => ({
  ...ran,
  output: ran.output.replace('{"ok":true,"database":"postgres"}', '{"ok":true,"database":"pglite"}'),
});
