import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { spawnServer } from '../support/ops-process.ts';

/**
 * PLATFORM_ROLE (docs/operating/several-machines.md, ADR 0006): parsed with
 * the rest of the configuration; `api` and `worker` need PostgreSQL, and the
 * embedded database refuses them at start-up with a message naming the
 * variable. Pure configuration and a process that never opens a database, so
 * this file runs the same on both databases; the roles at work are in
 * n-machines.test.ts (PostgreSQL).
 */
describe('PLATFORM_ROLE', () => {
  it('defaults to all; api and worker are accepted with DATABASE_URL; anything else names the variable', () => {
    const pg = 'postgres://postgres@127.0.0.1:1/none';
    expect(loadConfig({}).role).toBe('all');
    expect(loadConfig({ PLATFORM_ROLE: 'api', DATABASE_URL: pg }).role).toBe('api');
    expect(loadConfig({ PLATFORM_ROLE: 'worker', DATABASE_URL: pg }).role).toBe('worker');
    expect(loadConfig({ PLATFORM_ROLE: 'all', DATABASE_URL: pg }).role).toBe('all');
    expect(() => loadConfig({ PLATFORM_ROLE: 'api,worker', DATABASE_URL: pg })).toThrow(/PLATFORM_ROLE/);
  });

  it('api and worker are refused on the embedded database, whether DATABASE_URL is unset in the environment or in an override', () => {
    for (const role of ['api', 'worker']) {
      expect(() => loadConfig({ PLATFORM_ROLE: role })).toThrow(`PLATFORM_ROLE: '${role}' needs DATABASE_URL (PostgreSQL)`);
      expect(() => loadConfig({ PLATFORM_ROLE: role, DATABASE_URL: 'postgres://x@127.0.0.1/db' }, { databaseUrl: undefined })).toThrow(
        /needs DATABASE_URL/,
      );
    }
  });

  it('a worker started on the embedded database exits at start-up with the reason, before opening it', async () => {
    const started = spawnServer({ PLATFORM_ROLE: 'worker', DATA_DIR: 'memory://', PORT: '0', LOG_LEVEL: 'warn' });
    await expect(started).rejects.toThrow(
      /exited with 1 before its banner[\s\S]*PLATFORM_ROLE: 'worker' needs DATABASE_URL \(PostgreSQL\)/,
    );
  });
});
