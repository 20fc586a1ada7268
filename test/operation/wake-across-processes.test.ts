import { afterAll, describe, expect } from 'vitest';
import { appTest, onPostgres, startSecondApp } from '../support/kit.ts';
import { launch, operationsConfig, sandbox, settled, tenant } from './helpers.ts';

/**
 * Operations wake-up (wake.test.ts) across processes (PostgreSQL): A runs no
 * worker, B (a second process on A's database) polls once a minute and is
 * woken by the NOTIFY of the commit that enqueued the launch on A.
 */
const test = appTest({ config: operationsConfig({ worker: false, pollMs: 60_000 }) });

describe.skipIf(!onPostgres())('operations wake-up', () => {
  let b: Awaited<ReturnType<typeof startSecondApp>>;
  test.beforeAll(async ({ app }) => {
    b = await startSecondApp(app, operationsConfig({ worker: true, pollMs: 60_000 }));
  });
  afterAll(() => b?.stop());

  test('across processes: enqueued on A (no worker), B picks it up through NOTIFY', async ({ app: a }) => {
    const who = await tenant(a);
    const { operation } = await launch(a, who, { deployments: [sandbox()] });
    expect(await settled(a, who, operation.id, b.app)).toMatchObject({ status: 'succeeded' });
  });

  test("a NOTIFY lost while B's listener reconnects is covered: B looks again when it is back", async ({ app: a }) => {
    const who = await tenant(a);
    // Only B listens on the operations channel (A runs no worker); cut that connection, then launch while it is down.
    const { rows } = await a.app.deps.db.pool!.query(
      `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN platform_operations'`,
    );
    expect(rows).toHaveLength(1);
    const { operation } = await launch(a, who, { deployments: [sandbox()] });
    expect(await settled(a, who, operation.id, b.app)).toMatchObject({ status: 'succeeded' });
  });
});
