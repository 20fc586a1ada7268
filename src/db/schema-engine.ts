import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { bindMigrationAwareSqlAdapterFactory, type SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';

/**
 * Prisma's schema engine compiled to WebAssembly. It applies the standard
 * `prisma/migrations` folder exactly like `prisma migrate deploy` (same
 * `_prisma_migrations` bookkeeping) without the native binary the CLI would
 * download. The .wasm is instantiated by hand so Node 20 needs no
 * --experimental-wasm-modules flag.
 */
const require = createRequire(import.meta.url);
export const MIGRATIONS_DIR = resolve(dirname(new URL(import.meta.url).pathname), '../../prisma/migrations');
export const SCHEMA_FILE = resolve(MIGRATIONS_DIR, '../schema.prisma');

type Engine = import('@prisma/schema-engine-wasm').SchemaEngine;
type EngineModule = typeof import('@prisma/schema-engine-wasm');

let engineModule: Promise<EngineModule> | undefined;

/**
 * The engine arms a 10 s `setTimeout` around its work and never clears it: a `platform migrate` stayed alive 10 s
 * after its last migration. Its timers are tracked here and cleared once no engine is in use.
 */
const engineTimers = new Set<NodeJS.Timeout>();
let enginesInUse = 0;
let engineTimersArmed = 0;

/** The engine's timers: how many it armed in this process, and how many are still pending (test/db/schema-engine.test.ts). */
export const engineTimerCounts = () => ({ armed: engineTimersArmed, pending: engineTimers.size });

async function loadEngineModule(): Promise<EngineModule> {
  const pkgDir = dirname(require.resolve('@prisma/schema-engine-wasm'));
  const bg = await import(join(pkgDir, 'schema_engine_bg.js'));
  const imports: WebAssembly.ModuleImports = { ...bg };
  for (const name of Object.keys(bg).filter((k) => k.startsWith('__wbg_setTimeout_')))
    imports[name] = (fn: () => void, ms: number) => {
      const timer = setTimeout(() => {
        engineTimers.delete(timer);
        fn();
      }, ms >>> 0);
      engineTimers.add(timer);
      engineTimersArmed++;
      return timer;
    };
  const { instance } = await WebAssembly.instantiate(readFileSync(join(pkgDir, 'schema_engine_bg.wasm')), {
    './schema_engine_bg.js': imports,
  });
  bg.__wbg_set_wasm(instance.exports);
  (instance.exports as { __wbindgen_start: () => void }).__wbindgen_start();
  return bg as EngineModule;
}

export async function withSchemaEngine<T>(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  fn: (engine: Engine) => Promise<T>,
): Promise<T> {
  engineModule ??= loadEngineModule();
  const mod = await engineModule;
  const schema = readFileSync(SCHEMA_FILE, 'utf8');
  enginesInUse++;
  try {
    const engine = await mod.SchemaEngine.new(
      { datamodels: [[SCHEMA_FILE, schema]] },
      () => {},
      bindMigrationAwareSqlAdapterFactory(adapterFactory),
    );
    try {
      return await fn(engine);
    } finally {
      engine.free();
    }
  } finally {
    if (--enginesInUse === 0) {
      for (const timer of engineTimers) clearTimeout(timer);
      engineTimers.clear();
    }
  }
}

export function migrationList() {
  const dirs = existsSync(MIGRATIONS_DIR)
    ? readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  const lockPath = join(MIGRATIONS_DIR, 'migration_lock.toml');
  return {
    baseDir: MIGRATIONS_DIR,
    lockfile: { path: 'migration_lock.toml', content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: dirs.map((name) => ({
      path: name,
      migrationFile: {
        path: 'migration.sql',
        content: { tag: 'ok' as const, value: readFileSync(join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8') },
      },
    })),
  };
}

const noFilter = { externalTables: [], externalEnums: [] };

/** Runs one SQL statement on the database being migrated and returns its rows. */
export type RowQuery = (sql: string) => Promise<unknown[]>;

/**
 * True when `_prisma_migrations` records every folder migration as finished
 * and none as failed. Booting the wasm engine costs seconds, so `start` and
 * every test database cloned from a migrated template skip it then; anything
 * else (no table, a pending or failed migration) goes to the engine, which
 * applies or reports exactly as `prisma migrate deploy` would.
 */
export async function migrationsUpToDate(query: RowQuery): Promise<boolean> {
  let rows: { migration_name: string; finished: boolean }[];
  try {
    rows = (await query(
      'select migration_name, finished_at is not null as finished from _prisma_migrations where rolled_back_at is null',
    )) as typeof rows;
  } catch (err) {
    // No table yet: a fresh database. Anything else (PostgreSQL unreachable, a refused login) is the caller's to report.
    if ((err as { code?: string }).code === '42P01') return false;
    throw err;
  }
  if (rows.some((r) => !r.finished)) return false;
  const applied = new Set(rows.map((r) => r.migration_name));
  return migrationList().migrationDirectories.every((d) => applied.has(d.path));
}

/** Applies every pending migration; returns the names just applied. */
export async function applyMigrations(adapterFactory: SqlMigrationAwareDriverAdapterFactory): Promise<string[]> {
  return withSchemaEngine(adapterFactory, async (engine) => {
    const out = await engine.applyMigrations({ migrationsList: migrationList(), filters: noFilter });
    return out.appliedMigrationNames;
  });
}

/** SQL that takes the migrations folder to the current schema.prisma (empty when in sync). */
export async function diffMigrationsToSchema(adapterFactory: SqlMigrationAwareDriverAdapterFactory): Promise<string> {
  return withSchemaEngine(adapterFactory, async (engine) => {
    const schema = readFileSync(SCHEMA_FILE, 'utf8');
    const result = await engine.diff({
      from: { tag: 'migrations', ...migrationList() },
      to: { tag: 'schemaDatamodel', files: [{ path: SCHEMA_FILE, content: schema }] },
      script: true,
      exitCode: null,
      filters: noFilter,
    });
    return result.stdout ?? '';
  });
}
