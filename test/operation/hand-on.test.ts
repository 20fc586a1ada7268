import { describe, expect } from 'vitest';
import { appTest } from '../support/kit.ts';
import { counting, launch, operationsConfig, sandbox, settled, tenant } from './helpers.ts';

/**
 * Fewer round trips and hops between a launch's steps (issue #13, scenario 7): a step with no reads commits in one
 * batch whose fence aborts it when the lease is lost; a provisioning child started at its parent's commit runs on the
 * deployment that commit left, without reading it again, and its settling commit also reads what its parent's last
 * step needs, which then commits in one batch; a run that settles hands its slot to the next due operation in its own
 * commit, with no separate claim.
 */
const test = appTest({ config: operationsConfig({ worker: true, pollMs: 60_000, concurrency: 4 }) });

describe('hand-on: round trips and hops between steps', () => {
  test('a launch with a free slot: its child reads no deployment before the provider call, and commits in one batch', async ({
    app: t,
  }) => {
    const who = await tenant(t);
    const c = await counting(t, async () => {
      const { operation } = await launch(t, who, { deployments: [sandbox()] });
      expect(operation).toMatchObject({ status: 'running' });
      return settled(t, who, operation.id);
    });
    expect(c.out).toMatchObject({ status: 'succeeded', result: { deployments_succeeded: 1 } });
    expect(c.reads.get('deployment_by_id') ?? 0).toBe(0);
    // Reserve and fan out: fence + reads, then writes + COMMIT; the child: one batch, which also reads for its parent;
    // the finish, handed those reads: one batch.
    expect(c.fencedBatches()).toBe(4);
  });

  test('launches with several deployments settle every child and finish once, whichever child hands the launch on', async ({ app: t }) => {
    const who = await tenant(t);
    const launched = await Promise.all([1, 2, 3].map(() => launch(t, who, { deployments: [sandbox(), sandbox(), sandbox()] })));
    for (const { operation } of launched) {
      expect(await settled(t, who, operation.id)).toMatchObject({
        status: 'succeeded',
        result: { deployments_succeeded: 3, deployments_total: 3 },
      });
    }
  });
});
