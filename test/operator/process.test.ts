import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, onPostgres, type TestDatabase } from '../support/database.ts';
import { HttpClient } from '../support/http.ts';
import { spawnServer } from '../support/ops-process.ts';

/**
 * `npm start` as a real process: PORT=0 prints the real port, the bootstrap
 * credentials work, SIGTERM exits 0 promptly, and no credential ever reaches
 * the logs. On PostgreSQL (TEST_DATABASE_URL) the same runs with
 * DATABASE_URL, BOOTSTRAP=1 and OPERATOR_TOKEN.
 */
const dir = mkdtempSync(join(tmpdir(), 'platform-process-'));
let database: TestDatabase | undefined;
afterAll(async () => {
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('process', () => {
  it('npm start on PORT=0 prints the real port, serves the bootstrap credentials, never logs a secret, and exits 0 on SIGTERM', {
    timeout: 150_000,
  }, async () => {
    // Embedded: the default location under DATA_DIR. PostgreSQL: BOOTSTRAP_FILE.
    const credentialsFile = onPostgres() ? join(dir, 'dev-credentials.json') : join(dir, 'data', 'dev-credentials.json');
    const env: Record<string, string> = { DATA_DIR: join(dir, 'data'), PORT: '0', LOG_LEVEL: 'info' };
    if (onPostgres()) {
      database = await createTestDatabase();
      Object.assign(env, {
        DATABASE_URL: database.databaseUrl!,
        BOOTSTRAP: '1',
        BOOTSTRAP_FILE: credentialsFile,
        OPERATOR_TOKEN: `op_env_${randomBytes(16).toString('hex')}`,
      });
    }
    const server = await spawnServer(env);
    try {
      expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.origin).not.toMatch(/:0$/);
      const banner = server.output();
      expect(banner).toContain(`${server.origin}/api`);
      expect(banner).toContain(`${server.origin}/graphql`);
      expect(banner).toContain(credentialsFile);
      expect(banner).toContain('NODE_ENV=production'); // npm start runs as production does, unless told otherwise
      // Every served URL, the guides and the metrics included; the migrations as one short line (names at debug level).
      for (const path of ['/console', '/v1/platform', '/docs', '/operator', '/metrics', '/healthz'])
        expect(banner).toContain(`${server.origin}${path} `);
      // A fresh data directory migrates; a PostgreSQL test database is a copy of the migrated template.
      expect(banner).toMatch(onPostgres() ? /"msg":"database schema up to date/ : /"msg":"\d+ migrations applied"/);
      expect(banner).not.toContain('"migrations":[');

      const creds = JSON.parse(readFileSync(credentialsFile, 'utf8'));
      expect(creds.api_origin).toBe(server.origin);
      if (onPostgres()) expect(creds.operator_token).toBe(env.OPERATOR_TOKEN);
      const http = new HttpClient(server.origin);

      expect((await http.get('/healthz')).status).toBe(200);
      const ready = await http.get('/readyz');
      expect(ready.body).toEqual({ ok: true, database: onPostgres() ? 'postgres' : 'pglite' });

      const smoke = await http.post('/api/smoke', undefined, { token: creds.platform_token.secret });
      expect(smoke.status, smoke.text).toBe(200);
      expect(smoke.body.org_slug).toBe('dev');
      // The deprecated body token is a credential too: it must not be logged either.
      expect((await http.post('/api/smoke', { token: creds.platform_token.secret })).status).toBe(200);
      const created = await http.post('/platform/tokens/create', { name: 'proc', scopes: ['units:read'] }, { token: creds.user_token });
      expect(created.status, created.text).toBe(200);
      expect((await http.get('/operator/kill_switch', { token: creds.operator_token })).status).toBe(200);
      expect((await http.post('/api/smoke', undefined, { token: `${creds.platform_token.secret}x` })).status).toBe(401);
      const gql = await http.graphql('{ viewer { organization { slug } } }', {}, { token: creds.platform_token.secret });
      expect(gql.status, gql.text).toBe(200);
      // GraphiQL stays available in production mode.
      const graphiql = await http.get('/graphql', { headers: { accept: 'text/html' } });
      expect(graphiql.status).toBe(200);
      expect(graphiql.text).toContain('Platform API');

      const { code, signal, ms } = await server.stop('SIGTERM', 10_000);
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      expect(ms).toBeLessThan(10_000);

      const output = server.output();
      expect(output).toMatch(/"msg":"request"/); // info logs were written, so the check below means something
      for (const secret of [creds.platform_token.secret, creds.user_token, creds.operator_token, created.body.secret]) {
        expect(output).not.toContain(secret);
        expect(output).not.toContain(secret.slice(-24));
      }
    } finally {
      if (server.child.exitCode === null) await server.stop('SIGKILL', 2_000);
    }
  });
});
