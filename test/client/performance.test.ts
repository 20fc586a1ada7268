import { describe, expect } from 'vitest';
import { PlatformClient, PlatformError } from '../../packages/client/src/index.ts';
import { appTest, buildTenant } from '../support/kit.ts';

const test = appTest();

describe('performance and tiers against the real server', () => {
  test('record measurements, read rollups, and change a ladder waiting for its retier', async ({ app: t }) => {
    const { token } = await buildTenant(t, [
      'performance:read',
      'performance:write',
      'program_requirements:write',
      'program_tiers:read',
      'program_tiers:write',
    ]);
    const client = new PlatformClient({ apiKey: token, origin: t.origin });
    const subject = { externalUserId: 'seller-1', issuer: 'acme' };
    const batch = await client.performance.record([
      { ...subject, metric: 'sales', value: 3, occurredAt: new Date('2026-03-02T10:00:00Z'), externalId: 'o-1' },
      { ...subject, metric: 'sales', value: 4.25, occurredAt: '2026-03-04T10:00:00Z', externalId: 'o-2' },
      { ...subject, metric: 'sales', value: 99, occurredAt: '2026-03-05T10:00:00Z', externalId: 'o-1' },
    ]);
    expect(batch).toMatchObject({ object: 'measurement_batch', recorded: 2, duplicates: 1 });
    expect(batch.data[2]).toMatchObject({ externalId: 'o-1', value: 3, duplicate: true });
    const rollups = await client.performance.rollups({ ...subject, metric: 'sales', window: 'week' });
    expect(rollups).toEqual({
      object: 'list',
      hasMore: false,
      data: [
        {
          object: 'performance_rollup',
          metric: 'sales',
          window: 'week',
          periodStart: '2026-03-02T00:00:00.000Z',
          periodEnd: '2026-03-09T00:00:00.000Z',
          entity: batch.data[0]!.entity,
          program: null,
          value: 7.25,
          count: 2,
        },
      ],
    });
    const bad = await client.performance
      .record([{ ...subject, metric: 'Sales', value: 1, occurredAt: '2026-03-02T10:00:00Z' }])
      .catch((e) => e);
    expect(bad).toBeInstanceOf(PlatformError);
    expect(bad).toMatchObject({ status: 400, code: 'invalid_request', param: 'measurements.0.metric' });

    const program = await (
      await fetch(`${t.origin}/v1/platform/programs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'P' }),
      })
    ).json();
    const change = await client.programTiers.create(program.id, { name: 'Gold', metric: 'sales', threshold: 10, rateBps: 250 });
    expect(change.tier).toMatchObject({ object: 'program_tier', name: 'Gold', rateBps: 250, threshold: 10 });
    expect(change.operation.kind).toBe('program.retier');
    expect((await client.operations.wait(change.operation.id)).status).toBe('succeeded');
    expect((await client.programTiers.list(program.id)).map((r) => r.name)).toEqual(['Gold']);
    const updated = await client.programTiers.update(program.id, change.tier.id, { rateBps: 300 });
    expect(updated.tier.rateBps).toBe(300);
    const removed = await client.programTiers.delete(program.id, change.tier.id);
    expect(removed.tier).toEqual({ id: change.tier.id, object: 'program_tier', deleted: true });
    expect(await client.programTiers.list(program.id)).toEqual([]);
  });
});
