import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPersistentDatabase, onPostgres, type PersistentDatabase } from '../support/kit.ts';
import { type ServerProcess, spawnServer } from '../support/ops-process.ts';
import { bashSession, type BashSession } from './bash-session.ts';
import { drift, type ReadmeBlock, readmeBlocks, withPrintedOutputs } from './readme-blocks.ts';

/**
 * The README's shell session runs as written (convention in readme-blocks.ts
 * and at the top of the README's "Testing" section): a fresh `npm start`
 * server (the real process, default configuration, on a copy of the migrated
 * template so it starts in seconds), and every console and sh block run in
 * order in one bash session from a directory whose `.data/dev-credentials.json`
 * is the one that server's bootstrap wrote.
 *
 * On PGlite the server runs exactly as Quick start shows; on PostgreSQL
 * (TEST_DATABASE_URL) with the environment "Running on PostgreSQL" gives it
 * (`BOOTSTRAP=1`, and `WEBHOOK_ALLOW_LOOPBACK=1` for the delivery example),
 * and `/readyz`, the one answer that names the database, is read as the
 * embedded one. Quick start's banner is the embedded database's, so it is
 * checked on PGlite only.
 */
const README = resolve(import.meta.dirname, '../../README.md');
const MIGRATIONS = resolve(import.meta.dirname, '../../prisma/migrations');
const COMMAND_TIMEOUT_MS = 20_000;
/** README_UPDATE=1: after the run, rewrite README.md's shown outputs with what the commands printed (review the diff). */
const UPDATE = process.env.README_UPDATE === '1';

describe('README', () => {
  let database: PersistentDatabase;
  let server: ServerProcess;
  let shell: BashSession;
  let cwd: string;
  let credentials: string;

  beforeAll(async () => {
    database = await createPersistentDatabase();
    cwd = join(database.dir, 'session');
    mkdirSync(cwd);
    credentials = join(cwd, '.data', 'dev-credentials.json');
    // On PostgreSQL, the environment "Running on PostgreSQL" shows (bootstrap on, loopback webhooks allowed).
    const db: Record<string, string> = database.databaseUrl
      ? { DATABASE_URL: database.databaseUrl, BOOTSTRAP: '1', WEBHOOK_ALLOW_LOOPBACK: '1' }
      : { DATA_DIR: database.dataDir };
    server = await spawnServer({ PORT: '0', BOOTSTRAP_FILE: credentials, ...db });
    // NODE_PATH: the session runs outside the repository; "Partner connect" mints a handoff with this repository's `jose`.
    const NODE_PATH = join(import.meta.dirname, '../../node_modules');
    shell = bashSession(cwd, { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LANG: 'C.UTF-8', NODE_PATH });
  });

  afterAll(async () => {
    shell?.close();
    await server?.stop();
    await database?.drop();
  });

  test('every skip marker names a reason and sits on the line before a console or sh block', () => {
    const lines = readFileSync(README, 'utf8').split('\n');
    const markers = lines.flatMap((text, i) => (/^<!--.*readme-test/.test(text) ? [i] : []));
    for (const i of markers) {
      expect(lines[i], `README line ${i + 1}`).toMatch(/^<!-- readme-test: skip: \S.* -->$/);
      expect(lines[i + 1], `README line ${i + 2}`).toMatch(/^```(console|sh)$/);
    }
  });

  test.skipIf(onPostgres())('Quick start shows what npm start prints and writes: the banner, every migration, the credentials file', () => {
    const readme = readFileSync(README, 'utf8');
    const [migrationsLine, ...banner] = /It prints:\n\n```text\n([\s\S]*?)\n```/.exec(readme)![1]!.split('\n');
    const migrations = readdirSync(MIGRATIONS, { withFileTypes: true }).filter((d) => d.isDirectory());
    expect(JSON.parse(migrationsLine!).migrations).toEqual(migrations.map((d) => d.name).sort());
    // The README's paths are a reader's checkout; this server's data directory and credentials file are elsewhere.
    const printed = server
      .output()
      .split(credentials)
      .join('/home/you/platform-api/.data/dev-credentials.json')
      .split(database.dataDir)
      .join('/home/you/platform-api/.data')
      .split('\n');
    const from = printed.findIndex((l) => l.startsWith('Platform API listening'));
    const shown = printed.slice(from, from + banner.length).map((l) => l.split(server.origin).join('http://127.0.0.1:4000'));
    expect(shown).toEqual(banner);
    const sample = JSON.parse(/\n```json\n([\s\S]*?)\n```/.exec(readme)![1]!);
    expect(shape(JSON.parse(readFileSync(credentials, 'utf8')))).toEqual(shape(sample));
  });

  test('its console and sh blocks run in order and print what it shows', async () => {
    const blocks = readmeBlocks(readFileSync(README, 'utf8'));
    const failures: string[] = [];
    const printed = new Map<number, string>();
    session: for (const block of blocks.filter((b) => !b.skip)) {
      for (const command of block.commands) {
        const ran = await shell.run(command.command, COMMAND_TIMEOUT_MS).catch((e: Error) => e);
        if (!(ran instanceof Error)) printed.set(command.line, ran.output);
        const problem = ran instanceof Error ? ran.message : drift(command, onPostgres() ? asIfEmbedded(ran) : ran, server.origin);
        if (problem) failures.push(`${where(block, command.line)}\n$ ${command.command}\n${problem}`);
        if (ran instanceof Error) break session; // the shell is still busy with it
      }
    }
    if (UPDATE) writeFileSync(README, withPrintedOutputs(readFileSync(README, 'utf8'), printed));
    expect(failures.join('\n\n'), `${failures.length} README command(s) drifted`).toBe('');
  }, 90_000); // about 15 s (half of it the waits the README shows); generous for a loaded CI machine
});

const where = (block: ReadmeBlock, line: number) => `block ${block.index} (README line ${block.line}), command at line ${line}:`;

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

/** The one answer that names the database: the README shows the embedded one. */
const asIfEmbedded = (ran: { output: string; exitCode: number }) => ({
  ...ran,
  output: ran.output.replace('{"ok":true,"database":"postgres"}', '{"ok":true,"database":"pglite"}'),
});
