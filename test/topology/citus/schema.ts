import pg from 'pg';

/**
 * What the migrated schema says about each table's tenancy, read from PostgreSQL's catalog (so the partial unique
 * indexes and constraints the migrations add by hand count as much as schema.prisma's).
 *
 * Tenancy is modelled by `organization_id` (spec: every key, endpoint and event belongs to one organization). A
 * table is a tenant table when it carries that column, or when a foreign key or a `<table>_id` column (the schema
 * often names a parent without a constraint) leads to a tenant table; `organization` is the tenant root, keyed by
 * `id`; everything else is global.
 */
export const TENANT_KEY = 'organization_id';
export const ROOT = 'organization';

export type Tenancy = 'root' | 'tenant' | 'global';

export interface TableReport {
  table: string;
  tenancy: Tenancy;
  /** For a tenant table without the key: the path that makes it one (`delivery_id → webhook_delivery`). */
  via?: string;
  carriesKey: boolean;
  primaryKey: { columns: string[]; includesKey: boolean } | null;
  uniques: { name: string; columns: string[]; where?: string; includesKey: boolean }[];
  foreignKeys: { name: string; columns: string[]; references: string; referencedColumns: string[]; includesKey: boolean }[];
  /** What keeps a tenant table from being distributed by the key as it is (none for the root and global tables): what the test compares. */
  gaps: string[];
}

interface Catalog {
  tables: string[];
  columns: Map<string, string[]>;
  indexes: { table: string; name: string; primary: boolean; columns: string[]; where: string | null }[];
  fks: { table: string; name: string; columns: string[]; references: string; referencedColumns: string[] }[];
}

async function readCatalog(databaseUrl: string): Promise<Catalog> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ table: string; columns: string[] }>(`
      SELECT c.relname AS table, array_agg(a.attname::text ORDER BY a.attnum) AS columns
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> '_prisma_migrations'
      GROUP BY c.relname ORDER BY c.relname`);
    const indexes = await client.query<{ table: string; name: string; primary: boolean; columns: string[]; where: string | null }>(`
      SELECT t.relname AS table, i.relname AS name, x.indisprimary AS primary,
        array(SELECT pg_get_indexdef(x.indexrelid, k.ord::int, true) FROM generate_series(1, x.indnkeyatts) k(ord) ORDER BY k.ord) AS columns,
        pg_get_expr(x.indpred, x.indrelid) AS where
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = 'public' AND x.indisunique AND t.relname <> '_prisma_migrations'
      ORDER BY t.relname, i.relname`);
    const fks = await client.query<{ table: string; name: string; columns: string[]; references: string; referencedColumns: string[] }>(`
      SELECT t.relname AS table, c.conname AS name, r.relname AS references,
        array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(attnum, ord)
          JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns,
        array(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(attnum, ord)
          JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.ord) AS "referencedColumns"
      FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = 'public' AND c.contype = 'f'
      ORDER BY t.relname, c.conname`);
    return {
      tables: tables.rows.map((r) => r.table),
      columns: new Map(tables.rows.map((r) => [r.table, r.columns])),
      indexes: indexes.rows,
      fks: fks.rows,
    };
  } finally {
    await client.end();
  }
}

/** Which tables are tenant tables, and how each without the key became one (a fixpoint over foreign keys and `<table>_id` names). */
function tenancyOf(cat: Catalog): Map<string, { tenancy: Tenancy; via?: string }> {
  const out = new Map<string, { tenancy: Tenancy; via?: string }>();
  for (const t of cat.tables) {
    if (t === ROOT) out.set(t, { tenancy: 'root' });
    else if (cat.columns.get(t)!.includes(TENANT_KEY)) out.set(t, { tenancy: 'tenant' });
  }
  const isTenant = (t: string) => out.has(t);
  for (let changed = true; changed; ) {
    changed = false;
    for (const t of cat.tables) {
      if (isTenant(t)) continue;
      const fk = cat.fks.find((f) => f.table === t && isTenant(f.references));
      const named = cat.columns.get(t)!.find((c) => c.endsWith('_id') && isTenant(c.slice(0, -3)) && c.slice(0, -3) !== t);
      const via = fk
        ? `${fk.columns.join(', ')} → ${fk.references} (foreign key)`
        : named
          ? `${named} → ${named.slice(0, -3)} (by name, no foreign key)`
          : undefined;
      if (via) {
        out.set(t, { tenancy: 'tenant', via });
        changed = true;
      }
    }
  }
  for (const t of cat.tables) if (!out.has(t)) out.set(t, { tenancy: 'global' });
  return out;
}

/** The column that holds a table's tenant: `organization_id`, or the root's own `id`. */
const keyOf = (table: string) => (table === ROOT ? 'id' : TENANT_KEY);

export async function schemaReport(databaseUrl: string): Promise<TableReport[]> {
  const cat = await readCatalog(databaseUrl);
  const tenancy = tenancyOf(cat);
  return cat.tables.map((table) => {
    const { tenancy: kind, via } = tenancy.get(table)!;
    const key = keyOf(table);
    const has = (cols: string[]) => cols.includes(key);
    const pk = cat.indexes.find((i) => i.table === table && i.primary);
    const uniques = cat.indexes
      .filter((i) => i.table === table && !i.primary)
      .map((i) => ({ name: i.name, columns: i.columns, ...(i.where ? { where: i.where } : {}), includesKey: has(i.columns) }));
    const foreignKeys = cat.fks
      .filter((f) => f.table === table)
      .map((f) => ({
        name: f.name,
        columns: f.columns,
        references: f.references,
        referencedColumns: f.referencedColumns,
        // Citus accepts a foreign key between co-located tables only when both sides include the distribution column.
        includesKey: f.columns.includes(key) && f.referencedColumns.includes(keyOf(f.references)),
      }));
    const gaps: string[] = [];
    if (kind === 'tenant') {
      if (!cat.columns.get(table)!.includes(key)) gaps.push(`no ${key} column`);
      if (pk && !has(pk.columns)) gaps.push(`primary key (${pk.columns.join(', ')})`);
      if (!pk) gaps.push('no primary key');
      for (const u of uniques.filter((u) => !u.includesKey))
        gaps.push(`unique (${u.columns.join(', ')})${u.where ? ` WHERE ${u.where}` : ''}`);
      for (const f of foreignKeys.filter((f) => !f.includesKey))
        gaps.push(`foreign key (${f.columns.join(', ')}) → ${f.references} (${f.referencedColumns.join(', ')})`);
    }
    return {
      table,
      tenancy: kind,
      ...(via ? { via } : {}),
      carriesKey: cat.columns.get(table)!.includes(key),
      primaryKey: pk ? { columns: pk.columns, includesKey: has(pk.columns) } : null,
      uniques,
      foreignKeys,
      gaps,
    };
  });
}
