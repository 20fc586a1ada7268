import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startAppOn, type TestApp } from '../support/kit.ts';
import { waitUntil } from '../support/stream-client.ts';
import { webhookConfig } from '../webhook/receiver.ts';
import { compare, renderMarkdown, type CitusReport } from './citus/report.ts';
import { schemaReport } from './citus/schema.ts';
import { filtersByKey, type LoggedCluster, normalise, startLoggedCluster, unfilteredStatements } from './citus/statements.ts';
import { runWorkload } from './citus/workload.ts';

/**
 * The proof of ADR 0006's Citus plan, in report mode: per table, tenant or global and whether its keys include
 * `organization_id` (from the catalog of the migrated schema), and which statements of a representative workload
 * touch tenant tables without filtering by it (from the statement log of a cluster this file starts). It fails only
 * when something is worse than the committed report (docs/adr/0006-citus-report.json); `npm run citus:report`
 * regenerates that report (and its Markdown view) after a change that makes things better or is meant.
 *
 * PostgreSQL leg only: the cluster is the file's own either way, and once per CI run is enough.
 */
const WRITE = process.env.CITUS_REPORT === 'write';
const JSON_FILE = resolve(import.meta.dirname, '../../docs/adr/0006-citus-report.json');
const MD_FILE = resolve(import.meta.dirname, '../../docs/adr/0006-citus-report.md');
const DATABASE = 'citus_report';

describe.skipIf(!onPostgres() && !WRITE)('Citus report (PostgreSQL leg; the file starts its own cluster with a statement log)', () => {
  let cluster: LoggedCluster;
  let t: TestApp;
  let from: number;
  let databaseUrl: string;

  beforeAll(async () => {
    cluster = await startLoggedCluster();
    databaseUrl = await cluster.createDatabase(DATABASE);
    const database = { databaseUrl, dataDir: 'memory://', drop: async () => {} };
    const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
    // Migrated by the app's start; the log is read from after it.
    const running = await startAppOn(database, { operatorToken, ...webhookConfig({ retryScheduleMs: [0, 0, 0] }) });
    t = { ...running, operatorToken, database };
    from = cluster.mark();
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await cluster?.stop();
  });

  it('no tenant table and no hot statement is worse than the committed report', async () => {
    await runWorkload(t);
    await t.stop();
    // The log is written by PostgreSQL's collector, after the statements: a last statement of ours marks its end.
    const end = `citus-report end ${randomBytes(4).toString('hex')}`;
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`SELECT '${end}'`);
    await client.end();
    await waitUntil(() => cluster.statements(DATABASE, from).some((s) => s.includes(end)), 'the end of the statement log', 10_000);

    const tables = await schemaReport(databaseUrl);
    const current: CitusReport = { tables, statements: unfilteredStatements(cluster.statements(DATABASE, from), tables) };
    const text = (r: CitusReport) => `${JSON.stringify(r, null, 2)}\n`;
    if (WRITE) {
      writeFileSync(JSON_FILE, text(current));
      writeFileSync(MD_FILE, renderMarkdown(current));
      return;
    }
    const committed = JSON.parse(readFileSync(JSON_FILE, 'utf8')) as CitusReport;
    const { worse, better } = compare(committed, current);
    if (better.length)
      console.info(
        `Citus report: better than committed; run \`npm run citus:report\` and commit docs/adr/0006-citus-report.*\n  ${better.join('\n  ')}`,
      );
    expect(worse, 'worse than docs/adr/0006-citus-report.json (see ADR 0006, stage 2)').toEqual([]);
  });
});

describe('Citus report: how statements are read and reports compared', () => {
  const table = (name: string, gaps: string[]) =>
    ({ table: name, tenancy: 'tenant', carriesKey: true, primaryKey: null, uniques: [], foreignKeys: [], gaps }) as const;
  const report = (gaps: string[], sql: string[]): CitusReport => {
    const tables = [{ ...table('event', gaps), uniques: [], foreignKeys: [] }];
    return { tables, statements: unfilteredStatements(sql, tables) };
  };

  it('values are taken out, so one statement counts once however it was sent', () => {
    expect(normalise(`SELECT * FROM event WHERE id IN ('a', 'b''c', $3) AND seq > 10 LIMIT $1`)).toBe(
      'SELECT * FROM event WHERE id IN (?) AND seq > ? LIMIT ?',
    );
    expect(normalise('INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)')).toBe('INSERT INTO t (a, b) VALUES (?)');
  });

  it('a predicate on organization_id with a value, or an insert naming it, is a filter; a join on it is not', () => {
    expect(filtersByKey(normalise('SELECT 1 FROM "public"."event" WHERE "public"."event"."organization_id" = $1'))).toBe(true);
    expect(filtersByKey(normalise('SELECT 1 FROM event WHERE organization_id = ANY($1)'))).toBe(true);
    expect(filtersByKey(normalise('INSERT INTO "public"."event" ("id","organization_id") VALUES ($1,$2)'))).toBe(true);
    expect(filtersByKey(normalise('SELECT 1 FROM event e JOIN entity n ON n.organization_id = e.organization_id WHERE e.id = $1'))).toBe(
      false,
    );
    expect(filtersByKey(normalise('INSERT INTO webhook_attempt (id, delivery_id) VALUES ($1, $2)'))).toBe(false);
  });

  it('a new gap or a new unfiltered statement is worse; one that went away is better', () => {
    const committed = report(['primary key (id)'], ['SELECT * FROM event WHERE id = $1']);
    expect(compare(committed, committed)).toEqual({ worse: [], better: [] });
    const worse = compare(
      committed,
      report(['primary key (id)', 'unique (position)'], ['SELECT * FROM event WHERE id = $1', 'SELECT * FROM event WHERE seq IS NULL']),
    );
    expect(worse.worse).toEqual([expect.stringContaining('new gap: event: unique (position)'), expect.stringContaining('seq IS NULL')]);
    const better = compare(committed, report([], ['SELECT * FROM event WHERE id = $1 AND organization_id = $2']));
    expect(better.worse).toEqual([]);
    expect(better.better).toHaveLength(2);
  });
});
