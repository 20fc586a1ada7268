import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminQuery } from '../support/global-setup.ts';
import { seedDataDir, createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTenant, expectErrorResponse, expectPlatformError, onPostgres, startAppOn, type RunningApp } from '../support/kit.ts';

/**
 * Chaos, storage: the database's disk fills up under a running server, then
 * space returns. Every refused write is 503 `service_unavailable` with
 * Retry-After in both REST envelopes and GraphQL (never a 500), /readyz
 * answers 503 while writes fail and 200 again by itself once they can
 * succeed, and every write acknowledged before, during and after is still
 * there (also after a restart on the same files).
 *
 * The disk is a small tmpfs this file mounts (root only): PGlite's data
 * directory on it; on PostgreSQL a tablespace on it holding the test database
 * (created IN it, so new relations land there too; WAL stays on the cluster's
 * own disk). It is filled with a file until the file system refuses a byte.
 * Where `mount` is not permitted the test is skipped with the reason printed;
 * the mapping itself keeps its table test (database-unavailable.test.ts).
 */
const SIZE = '80m';

const SCOPES = ['units:read', 'units:create', 'webhooks:read', 'webhooks:write'];
const CREATE_ENDPOINT = `mutation ($url: String!) { createWebhookEndpoint(url: $url) { id } }`;

/** Mounts a tmpfs at a new directory; the reason when it cannot. */
function mountTmpfs(): { dir: string } | { reason: string } {
  const dir = mkdtempSync('/tmp/storage-faults-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${SIZE},mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: `mount -t tmpfs not permitted here (${String((e as { stderr?: unknown }).stderr ?? e).trim() || 'no reason given'})` };
  }
}

/** Writes a file until the file system refuses a byte; returns its path. */
function fill(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  for (const size of [1 << 20, 4096, 1]) {
    const chunk = Buffer.alloc(size, 1);
    try {
      for (;;) writeSync(fd, chunk);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
    }
  }
  closeSync(fd);
  return path;
}

interface Ledger {
  units: string[];
  endpoints: string[];
  /** `<surface> <status> <code>` of each refused write. */
  refusals: Record<string, number>;
}

function scenario(name: string, setUp: (dir: string) => Promise<TestDatabase>) {
  describe(name, () => {
    let mounted: { dir: string } | { reason: string };
    let database: TestDatabase | undefined;
    let app: RunningApp | undefined;

    beforeAll(async () => {
      mounted = mountTmpfs();
      if ('dir' in mounted) database = await setUp(mounted.dir);
    }, 60_000);
    afterAll(async () => {
      await app?.stop();
      await database?.drop();
      if (mounted && 'dir' in mounted) {
        execFileSync('umount', ['-l', mounted.dir]);
        rmSync(mounted.dir, { recursive: true, force: true });
      }
    });

    it('a full disk is 503 service_unavailable with Retry-After everywhere and /readyz not ready; both recover by themselves, nothing acknowledged is lost', {
      timeout: 120_000,
    }, async (ctx) => {
      if ('reason' in mounted) {
        console.log(`storage faults, ${name}: skipped: ${mounted.reason}`);
        return ctx.skip();
      }
      const dir = mounted.dir;
      const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
      app = await startAppOn(database!, { operatorToken });
      const t = app;
      const { token } = await buildTenant({ http: t.http, operatorToken }, SCOPES);
      const ledger: Ledger = { units: [], endpoints: [], refusals: {} };
      let n = 0;

      /** One write per surface; records what was acknowledged, and checks every refusal. */
      const writes = {
        surfaceA: async () => {
          const res = await t.http.post('/api/units/create', { type: 'video', caption: `u${n++}` }, { token });
          if (res.status === 200) return void ledger.units.push(res.body.unit.id);
          expectErrorResponse(res, 503, 'service_unavailable');
          return refused('surface A', res);
        },
        surfaceB: async () => {
          const res = await t.http.post('/v1/platform/webhook_endpoints', { url: `https://example.com/hook/${n++}` }, { token });
          if (res.status === 201) return void ledger.endpoints.push(res.body.webhook_endpoint.id);
          expectPlatformError(res, 503, 'service_unavailable', null);
          return refused('surface B', res);
        },
        graphql: async () => {
          const res = await t.http.graphql(CREATE_ENDPOINT, { url: `https://example.com/hook/${n++}` }, { token });
          if (res.status === 200 && !res.body.errors) return void ledger.endpoints.push(res.body.data.createWebhookEndpoint.id);
          expect(res.status, res.text).toBe(503);
          expect(res.body.errors, res.text).toHaveLength(1);
          expect(res.body.errors[0].extensions, res.text).toMatchObject({
            code: 'service_unavailable',
            request_id: res.headers.get('request-id'),
          });
          return refused('graphql', res);
        },
      };
      const refused = (surface: string, res: { status: number; headers: Headers; text: string }) => {
        expect(Number(res.headers.get('retry-after')), res.text).toBeGreaterThan(0);
        ledger.refusals[`${surface} ${res.status}`] = (ledger.refusals[`${surface} ${res.status}`] ?? 0) + 1;
        return true;
      };

      for (const write of Object.values(writes)) expect(await write()).toBeUndefined(); // acknowledged while there is room
      expect((await t.http.get('/readyz')).status).toBe(200);

      const filler = fill(dir);
      // Pages with room left may take a few more rows; each surface must come to a refusal.
      for (const [surface, write] of Object.entries(writes)) {
        let refusedOnce = false;
        for (let i = 0; i < 40 && !refusedOnce; i++) refusedOnce = (await write()) === true;
        expect(refusedOnce, `${surface} never refused a write on a full disk`).toBe(true);
      }
      const notReady = await t.http.get('/readyz');
      expect(notReady.status, notReady.text).toBe(503);
      expect(notReady.body).toMatchObject({ ok: false });
      expect((await t.http.get('/readyz')).status).toBe(503); // still, as long as the disk is full
      expect(await writes.surfaceB()).toBe(true);

      rmSync(filler);
      const ready = await t.http.get('/readyz');
      expect(ready.status, ready.text).toBe(200);
      for (const write of Object.values(writes)) expect(await write()).toBeUndefined();
      console.log(
        `storage faults, ${name}: ${JSON.stringify({ acknowledged: ledger.units.length + ledger.endpoints.length, refusals: ledger.refusals })}`,
      );

      // Nothing acknowledged is lost: all there, and again after a restart on the same files.
      const check = async (server: RunningApp) => {
        const units = await server.http.post('/api/units/list', { per_page: 100 }, { token });
        expect(units.status, units.text).toBe(200);
        expect(units.body.units.map((u: { id: string }) => u.id)).toEqual(expect.arrayContaining(ledger.units));
        const endpoints = await server.http.get('/v1/platform/webhook_endpoints?limit=100', { token });
        expect(endpoints.status, endpoints.text).toBe(200);
        expect(endpoints.body.data.map((e: { id: string }) => e.id)).toEqual(expect.arrayContaining(ledger.endpoints));
      };
      await check(t);
      await t.stop();
      app = await startAppOn(database!);
      await check(app);
    });
  });
}

describe('storage faults (chaos: a full disk under a running server)', () => {
  if (!onPostgres()) {
    // PGlite's data directory on the tmpfs, seeded from the run's migrated template.
    scenario('PGlite', async (dir) => {
      const database = { ...(await createTestDatabase()), dataDir: join(dir, 'data') };
      await seedDataDir(database, database.dataDir);
      return database;
    });
  } else {
    // The test database created IN a tablespace on the tmpfs, which the postgres user owns.
    scenario('PostgreSQL', async (dir) => {
      const admin = process.env.TEST_DATABASE_URL!;
      const template = inject('databaseTemplate');
      const location = join(dir, 'tablespace');
      execFileSync('install', ['-d', '-o', 'postgres', '-g', 'postgres', '-m', '0700', location]);
      chmodSync(dir, 0o755);
      const name = `t_${randomBytes(6).toString('hex')}`;
      const space = `ts_${name}`;
      await adminQuery(admin, `CREATE TABLESPACE ${space} LOCATION '${location}'`);
      await adminQuery(
        admin,
        `CREATE DATABASE ${name} TEMPLATE ${template.kind === 'postgres' ? template.name : 'template1'} TABLESPACE ${space}`,
      );
      const url = new URL(admin);
      url.pathname = `/${name}`;
      return {
        databaseUrl: url.toString(),
        dataDir: 'memory://',
        drop: async () => {
          await adminQuery(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          await adminQuery(admin, `DROP TABLESPACE IF EXISTS ${space}`);
        },
      };
    });
  }
});
