import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { createTestDatabase, onPostgres } from '../support/database.ts';

/** The embedded database's directory: the owner's alone (PGlite writes its files 0666 whatever the umask). */
const root = mkdtempSync(join(tmpdir(), 'data-dir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function exposed(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .map((e) => join(e.parentPath, e.name))
    .filter((p) => statSync(p).mode & 0o022);
}

// The embedded database's own files: the PGlite pass proves it; the PostgreSQL pass would only repeat it (slower, with
// no template to start from).
describe.skipIf(onPostgres())('the embedded data directory', () => {
  it('a fresh data directory is 0700 and, after migrations and writes, no file in it is group- or world-writable', async () => {
    const dataDir = join(root, 'fresh', 'data');
    const db = await openDatabase({ dataDir });
    await db.migrate();
    await db.pglite!.query('CREATE TABLE scratch (id int)');
    await db.pglite!.query('INSERT INTO scratch VALUES (1)');
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    await db.close();
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(exposed(dataDir)).toEqual([]);
  }, 120_000);

  it('an existing directory left open by an earlier version is narrowed when the database opens', async () => {
    const first = join(root, 'earlier');
    // Any existing directory will do: the run's migrated template, a few seconds of CPU less than creating a database
    // from scratch, which the test above does.
    const { template } = await createTestDatabase();
    const db = await openDatabase({ dataDir: first, loadDataDir: template });
    await db.close();
    chmodSync(first, 0o777);
    chmodSync(join(first, 'PG_VERSION'), 0o666);
    expect(exposed(first).length).toBeGreaterThan(0);
    const again = await openDatabase({ dataDir: first });
    expect(statSync(first).mode & 0o777).toBe(0o700);
    expect(exposed(first)).toEqual([]);
    await again.close();
  }, 120_000);
});
