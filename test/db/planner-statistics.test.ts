import { expect } from 'vitest';
import { startMaintenance } from '../../src/workers/maintenance.ts';
import { plannerStatisticsOf } from '../support/db-access.ts';
import { appTest, buildTenant, onPostgres } from '../support/kit.ts';

/**
 * PGlite has no autovacuum: without the maintenance loop's ANALYZE its planner never learned a table's size, and the
 * ledger export's keyset pages rescanned and sorted the whole period on every page (found by the export-memory test,
 * whose run went from quadratic to linear with statistics). PostgreSQL's autovacuum analyzes by itself, on its own
 * schedule, so there is nothing deterministic to prove there.
 */
const test = appTest();

test.skipIf(onPostgres())('the maintenance loop gives the embedded planner statistics of the tables it wrote', async ({ app: t }) => {
  const { token } = await buildTenant(t, ['webhooks:write']);
  for (let i = 0; i < 3; i++) {
    const res = await t.http.post('/v1/platform/webhook_endpoints', { url: `https://stats.example/${i}` }, { token });
    expect(res.status, res.text).toBe(201);
  }
  expect(await plannerStatisticsOf(t, 'webhook_endpoint')).toBe(0);
  const maintenance = startMaintenance(t.app.deps, 3_600_000);
  await maintenance.runOnce();
  maintenance.stop();
  expect(await plannerStatisticsOf(t, 'webhook_endpoint')).toBeGreaterThan(0);
});
