import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../../support/brokers.ts';
import { TENANT_KEY, type TableReport } from './schema.ts';

const execFileAsync = promisify(execFile);
const PG_THROWAWAY = resolve(import.meta.dirname, '../../../.ci/pg-throwaway');

/**
 * A throwaway PostgreSQL cluster of the test's own (.ci/pg-throwaway, as the chaos suite starts one) that logs every
 * statement it runs as JSON lines (PostgreSQL 15's `jsonlog`): `log_statement = all` logs the text of each simple
 * query and each extended-protocol Execute, with its `$n` placeholders (values go to DETAIL, not read here).
 */
export interface LoggedCluster {
  /** The URL of a fresh database `name` on the cluster. */
  createDatabase(name: string): Promise<string>;
  /** Where the log ends now: statements logged later are read from here. */
  mark(): number;
  /** Every statement run on `database` since `from` (a `mark()`), one entry per statement of a multi-statement query. */
  statements(database: string, from: number): string[];
  stop(): Promise<void>;
}

export async function startLoggedCluster(): Promise<LoggedCluster> {
  const root = mkdtempSync('/tmp/citus-report-pg-');
  chmodSync(root, 0o755); // initdb runs as the postgres user
  const dir = join(root, 'data');
  const port = await freePort(); // free now: a random pick could collide with a client socket's ephemeral port
  let admin: string;
  try {
    admin = (await execFileAsync(PG_THROWAWAY, ['start', dir, String(port)])).stdout.trim();
    await query(admin, [
      `ALTER SYSTEM SET logging_collector = on`,
      `ALTER SYSTEM SET log_destination = 'jsonlog'`,
      `ALTER SYSTEM SET log_directory = 'log'`,
      `ALTER SYSTEM SET log_filename = 'statements'`,
      `ALTER SYSTEM SET log_rotation_age = 0`,
      `ALTER SYSTEM SET log_rotation_size = 0`,
      `ALTER SYSTEM SET log_statement = 'all'`,
    ]);
    // logging_collector takes effect at start only.
    await execFileAsync(PG_THROWAWAY, ['restart', dir]);
  } catch (e) {
    await execFileAsync(PG_THROWAWAY, ['stop', dir]).catch(() => {});
    rmSync(root, { recursive: true, force: true });
    throw e;
  }
  const logFile = join(dir, 'log', 'statements.json');
  return {
    async createDatabase(name) {
      await query(admin, [`CREATE DATABASE ${name}`]);
      const url = new URL(admin);
      url.pathname = `/${name}`;
      return url.toString();
    },
    mark: () => (existsSync(logFile) ? statSync(logFile).size : 0),
    statements: (database, from) => parseLog(readFileSync(logFile).subarray(from).toString('utf8'), database),
    async stop() {
      await execFileAsync(PG_THROWAWAY, ['stop', dir]).catch(() => {});
      rmSync(root, { recursive: true, force: true });
    },
  };
}

async function query(url: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const s of statements) await client.query(s);
  } finally {
    await client.end();
  }
}

/** The statements of a jsonlog's lines: `statement: …` (simple query, split on top-level `;`) and `execute <name>: …`. */
export function parseLog(text: string, database: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    let entry: { dbname?: string; message?: string };
    try {
      entry = JSON.parse(line);
    } catch {
      continue; // the last line may still be being written
    }
    if (entry.dbname !== database || !entry.message) continue;
    const m = /^(?:statement|execute [^:]*): ([\s\S]*)$/.exec(entry.message);
    if (m) out.push(...splitStatements(m[1]!));
  }
  return out;
}

/** Splits on `;` outside quotes, dollar quotes and comments. */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      i = sql.indexOf(c, i + 1);
      while (i !== -1 && sql[i + 1] === c) i = sql.indexOf(c, i + 2);
      if (i === -1) break;
    } else if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl === -1 ? sql.length : nl;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))?.[0];
      if (tag) i = sql.indexOf(tag, i + tag.length) + tag.length - 1;
      if (i < 0) break;
    } else if (c === ';') {
      out.push(sql.slice(start, i));
      start = i + 1;
    }
  }
  out.push(sql.slice(start));
  return out.map((s) => s.trim()).filter(Boolean);
}

/**
 * A statement with its values out, so each distinct statement counts once however it was sent: literals and `$n`
 * become `?`, a list of them `(?)`, repeated VALUES rows one row, and whitespace one space. Prisma's
 * `"public"."table"."column"` qualifications stay (they are the same text every time).
 */
export function normalise(sql: string): string {
  return sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/\b[Ee]'(?:[^'\\]|\\.|'')*'/g, '?')
    .replace(/'(?:[^']|'')*'/g, '?')
    .replace(/\$\d+/g, '?')
    .replace(/(?<![\w."])-?\d+(?:\.\d+)?\b/g, '?')
    .replace(/\s+/g, ' ')
    .replace(/\(\s*\?(?:::[\w[\]]+)?(?:\s*,\s*\?(?:::[\w[\]]+)?)*\s*\)/g, '(?)')
    .replace(/(VALUES \((?:[^()]|\([^()]*\))*\))(?:\s*,\s*\((?:[^()]|\([^()]*\))*\))+/gi, '$1')
    .trim();
}

export interface StatementReport {
  /** A short hash of the normalised text: how the test recognises a statement across runs. */
  id: string;
  sql: string;
  /** The tenant tables it touches. */
  tables: string[];
  /** Its first word, and what it is for as far as the text says (see `purposeOf`). */
  kind: string;
  purpose: string;
}

/** The tables a statement names after FROM, JOIN, UPDATE, INTO or DELETE FROM, among `known` (CTE names drop out). */
export function tablesOf(sql: string, known: Set<string>): string[] {
  const found = new Set<string>();
  for (const m of sql.matchAll(/\b(?:FROM|JOIN|UPDATE|INTO)\s+(?:"?public"?\.)?"?([a-z_][a-z0-9_]*)"?/gi)) {
    const t = m[1]!.toLowerCase();
    if (known.has(t)) found.add(t);
  }
  return [...found].sort();
}

/**
 * Whether Citus could route the statement to one organization's shard from its text: a predicate comparing
 * `organization_id` with a value (`= ?`, `IN (?)`, `= ANY (?)`), or an INSERT whose column list names it.
 */
export function filtersByKey(sql: string): boolean {
  const key = `"?${TENANT_KEY}"?`;
  if (new RegExp(`${key}\\s*(?:=\\s*(?:ANY\\s*)?\\(?\\s*\\?|IN\\s*\\(\\s*\\?)`, 'i').test(sql)) return true;
  const insert = /^\s*(?:WITH\b[\s\S]*?)?INSERT\s+INTO\s+\S+\s*\(([^)]*)\)/i.exec(sql);
  return Boolean(insert && new RegExp(`(^|[\\s,])${key}(\\s*,|\\s*$)`).test(insert[1]!));
}

/** What a statement that does not filter by the key is for, read from its text: the ADR's plan differs for each. */
export function purposeOf(sql: string): string {
  if (/SKIP LOCKED/i.test(sql)) return 'lease: workers claim due rows across organizations';
  if (/\bevent\b/.test(sql) && /\bposition\b|seq IS NULL/i.test(sql)) return 'log tail or sequencing, across organizations';
  if (/token_hash"?\s*=\s*\?/i.test(sql)) return 'credential lookup by hash (the organization is not known yet)';
  if (/^\s*INSERT\b/i.test(sql)) return 'insert into a table without the key';
  if (/unnest\(\?\)|json_to_recordset\(\?\)|jsonb?_array_elements_text\(\?\)/i.test(sql))
    return 'a batch of rows by ids passed as one value';
  if (/_id"?\s*(=|IN)\s*\(?\s*\?|\bid"?\s*(=|IN)\s*\(?\s*\?/i.test(sql))
    return 'by id or parent id (the organization is implied, not stated)';
  if (/(expires_at|grace_ends_at|run_after|next_attempt_at|accrued_until|evaluated_at)\b/i.test(sql))
    return 'due-time scan across organizations (scheduler)';
  return 'other: read the statement';
}

/** The distinct statements on tenant tables that do not filter by the key, from a statement log. */
export function unfilteredStatements(logged: string[], tables: TableReport[]): { tenantStatements: number; unfiltered: StatementReport[] } {
  const tenant = new Set(tables.filter((t) => t.tenancy === 'tenant').map((t) => t.table));
  const known = new Set(tables.map((t) => t.table));
  const onTenantTables = new Map<string, string[]>();
  for (const raw of logged) {
    const sql = normalise(raw);
    if (onTenantTables.has(sql)) continue;
    const touched = tablesOf(sql, known).filter((t) => tenant.has(t));
    if (touched.length) onTenantTables.set(sql, touched);
  }
  const unfiltered = [...onTenantTables]
    .filter(([sql]) => !filtersByKey(sql))
    .map(([sql, touched]) => ({
      id: createHash('sha256').update(sql).digest('hex').slice(0, 12),
      sql,
      tables: touched,
      kind: sql.split(' ')[0]!.toUpperCase(),
      purpose: purposeOf(sql),
    }))
    .sort((a, b) => a.tables.join().localeCompare(b.tables.join()) || a.sql.localeCompare(b.sql));
  return { tenantStatements: onTenantTables.size, unfiltered };
}
