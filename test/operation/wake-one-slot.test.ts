import { describe, expect } from 'vitest';
import { appTest } from '../support/kit.ts';
import { launch, operationsConfig, sandbox, settled, tenant } from './helpers.ts';

/**
 * Operations wake-up (wake.test.ts) with one slot in the process: a launch
 * that found the slot busy is claimed as runs end, not at the once-a-minute poll.
 */
const test = appTest({ config: operationsConfig({ worker: true, pollMs: 60_000, concurrency: 1 }) });

describe('operations wake-up', () => {
  test('with one slot, launches that found it busy are claimed as runs end, not at the poll', async ({ app: one }) => {
    const who = await tenant(one);
    // The first takes the only slot (its child's provider call is slow); the second finds it busy and is left pending.
    const first = await launch(one, who, { deployments: [sandbox({ delay_ms: 1500 })] });
    const second = await launch(one, who, { deployments: [sandbox()] });
    expect(second.operation).toMatchObject({ status: 'pending', attempts: 0 });
    for (const { operation } of [first, second]) expect(await settled(one, who, operation.id)).toMatchObject({ status: 'succeeded' });
  });
});
