import { describe, expect } from 'vitest';
import { appTest, onPostgres } from '../support/kit.ts';
import { counting, launch, operationsConfig, sandbox, settled, tenant } from './helpers.ts';

/** Hand-on (hand-on.test.ts) with one slot in the process: the settling commit of a run hands its slot on. */
const test = appTest({ config: operationsConfig({ worker: true, pollMs: 60_000, concurrency: 1 }) });

describe('hand-on: round trips and hops between steps', () => {
  test('with one slot, the launch that found it busy is claimed by the settling commit of the run that held it (PostgreSQL)', async ({
    app: one,
  }) => {
    const who = await tenant(one);
    const c = await counting(one, async () => {
      const first = await launch(one, who, { deployments: [sandbox({ delay_ms: 300 })] });
      const second = await launch(one, who, { deployments: [sandbox()] });
      expect(second.operation).toMatchObject({ status: 'pending', attempts: 0 });
      return Promise.all([first, second].map(({ operation }) => settled(one, who, operation.id)));
    });
    for (const row of c.out) expect(row).toMatchObject({ status: 'succeeded', attempts: 1 });
    // On PGlite (one connection, nothing to save) the kick claims it, after pending I/O.
    expect(c.claimed()).toBe(onPostgres() ? 0 : 1);
  });
});
