import { describe, expect } from 'vitest';
import { appTest } from '../support/kit.ts';
import { launch, operationsConfig, sandbox, settled, tenant } from './helpers.ts';

/**
 * Operations are woken by the commits that make them due, not by the poll:
 * every worker here polls once a minute, and each launch must settle far
 * sooner. In one process the enqueuing commit kicks the worker; across
 * processes (PostgreSQL) the same commit's NOTIFY does.
 */
const test = appTest({ config: operationsConfig({ worker: true, pollMs: 60_000 }) });

describe('operations wake-up', () => {
  test('a launch settles promptly with the poll at a minute: woken by its own commits, child and parent', async ({ app: t }) => {
    const who = await tenant(t);
    const launched = await Promise.all([1, 2, 3].map(() => launch(t, who, { deployments: [sandbox(), sandbox()] })));
    for (const { operation } of launched) {
      expect(await settled(t, who, operation.id)).toMatchObject({ status: 'succeeded', result: { deployments_succeeded: 2 } });
    }
  });

  test('with a free slot a launch runs here from its request to its end: started at its commit, child and parent handed on, no claim', async ({
    app: t,
  }) => {
    const who = await tenant(t);
    const sql = t.app.deps.db.sql;
    const rows = sql.rows;
    let claims = 0;
    // Claims that took something (an idle kick may still look and find nothing).
    sql.rows = async (s, params) => {
      const found = await rows(s, params);
      if (s.name === 'operations_claim' && found.length) claims++;
      return found;
    };
    try {
      const { operation } = await launch(t, who, { deployments: [sandbox()] });
      // Inserted leased to this process's worker: running, first attempt, before any claim.
      expect(operation).toMatchObject({ status: 'running', attempts: 1 });
      expect(await settled(t, who, operation.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
      const [child] = (await t.http.get(`/v1/platform/operations?subject_type=deployment`, { token: who.token })).body.data;
      expect(child).toMatchObject({ status: 'succeeded', attempts: 1, parent_operation_id: operation.id });
      expect(claims).toBe(0);
    } finally {
      sql.rows = rows;
    }
  });
});
