import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, expectTypeOf } from 'vitest';
import { PlatformClient, type TypedEvent } from '../../packages/client/src/index.ts';
import { PUBLIC_EVENT_TYPES } from '../../src/domain/event/types.ts';
import { EVENT_DATA_FILE, generated } from '../../scripts/generate-event-data.ts';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';

/** The client's event typing (packages/client/src/event-data.ts, generated) and its `eventTypes` resource, through real HTTP. */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

describe('client event typing', () => {
  test('event-data.ts is what scripts/generate-event-data.ts makes from the payload schemas (npm run client:generate)', () => {
    expect(readFileSync(EVENT_DATA_FILE, 'utf8')).toBe(generated());
  });

  test('narrowing on event.type gives the typed data (checked by tsc)', () => {
    const read = (e: TypedEvent) => {
      if (e.type === 'enrollment.qualified') {
        expectTypeOf(e.data.previousStatus).toEqualTypeOf<'not_qualified' | 'qualified' | 'grace'>();
        expectTypeOf(e.data.trigger).toExtend<string>();
        // @ts-expect-error snake_case keys are not the client's
        void e.data.previous_status;
      } else if (e.type === 'budget.reserve_failed') {
        expectTypeOf(e.data.walletBalance).toEqualTypeOf<number>();
      } else if (e.type === 'distribution.live') {
        expectTypeOf(e.data.object.budgetReserved).toEqualTypeOf<number>();
        expectTypeOf(e.data.partial).toEqualTypeOf<boolean>();
      }
    };
    expect(read).toBeTypeOf('function');
    expectTypeOf<TypedEvent<'assertion.revoked'>['data']['action']>().toEqualTypeOf<'asserted' | 'revoked'>();
  });

  test('eventTypes.list and retrieve: every public type; its schema (camelCased, required names too) validates the data the client reads', async () => {
    const { token } = await buildTenant(t, ['events:read', 'assertions:write']);
    const client = new PlatformClient({ apiKey: token, origin: t.origin });
    const page = await client.eventTypes.list();
    // The same shape as every list (one page: the catalogue is small).
    expect(page).toMatchObject({ object: 'list', hasMore: false });
    expectTypeOf(page.hasMore).toEqualTypeOf<boolean>();
    const all = page.data;
    expect(all.map((e) => e.type)).toEqual([...PUBLIC_EVENT_TYPES].sort());
    const legacy = await client.eventTypes.retrieve('program_member.paused');
    expect(legacy.type).toBe('relationship.paused');
    await expect(client.eventTypes.retrieve('payout.lost')).rejects.toMatchObject({ code: 'resource_missing', status: 404 });

    const asserted = await t.http.post(
      '/v1/platform/assertions',
      { external_user_id: randomUUID(), issuer: 'acme', key: 'verified' },
      { token },
    );
    expect(asserted.status, asserted.text).toBe(201);
    await t.app.sequencer.flush();
    const [event] = (await client.events.list({ type: 'assertion.created' })).data;
    expect(event?.type).toBe('assertion.created');
    const ajv = new Ajv2020({ allErrors: true });
    const schema = all.find((e) => e.type === 'assertion.created')!.schema;
    const validate = ajv.compile(schema);
    expect(validate(event!.data), ajv.errorsText(validate.errors)).toBe(true);
    expect(schema.required).toContain('effectiveAt');
    for (const entry of all) expect(ajv.compile(entry.schema)(entry.example), entry.type).toBe(true);
  });
});
