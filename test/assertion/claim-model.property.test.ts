import fc from 'fast-check';
import { expect } from 'vitest';
import { appTest, type TestApp } from '../support/kit.ts';
import { setup } from './helpers.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

/**
 * The claim state machine against a reference model small enough to be
 * obviously right: the claim is null or { value, expiresAt }, and it is live
 * while expiresAt is null or in the future. For any sequence of creates,
 * refreshes (same value, new expiry), revokes and clock moves, the HTTP
 * answers, the listed claim and the emitted events must match the model.
 */
type Claim = { value: number; expiresAt: number | null } | null;
type Cmd =
  | { kind: 'create'; value: boolean | number; expiresInMin: number | null }
  | { kind: 'refresh'; expiresInMin: number | null }
  | { kind: 'revoke' }
  | { kind: 'advance'; minutes: number };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({
    kind: fc.constant('create' as const),
    value: fc.oneof(fc.boolean(), fc.constantFrom(0, 1, 2, 7.5, -3)),
    expiresInMin: fc.option(fc.integer({ min: 1, max: 120 }), { nil: null }),
  }),
  fc.record({ kind: fc.constant('refresh' as const), expiresInMin: fc.option(fc.integer({ min: 1, max: 120 }), { nil: null }) }),
  fc.constant({ kind: 'revoke' as const }),
  fc.record({ kind: fc.constant('advance' as const), minutes: fc.integer({ min: 0, max: 150 }) }),
);

const live = (c: Claim, now: number): c is NonNullable<Claim> => c !== null && (c.expiresAt === null || c.expiresAt > now);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

test('for any sequence of creates, refreshes, revokes and clock moves, claim and events match the reference model', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(cmd, { minLength: 1, maxLength: 12 }), async (cmds) => {
      const { api } = await setup(t); // a fresh organization per run: its feed holds only this run's events
      const subject = { external_user_id: 'prop-user', issuer: 'https://idp.example' };
      let model: Claim = null;
      let entity: string | undefined;
      const expectedEvents: [string, number | null, string | null][] = [];
      let lastValue = 1;
      for (const c of cmds) {
        const now = t.clock.now().getTime();
        if (c.kind === 'advance') {
          t.clock.advance(c.minutes * 60_000);
          continue;
        }
        if (c.kind === 'revoke') {
          const res = await api.revoke({ ...subject, key: 'claim' });
          if (live(model, now)) {
            expect(res.status, res.text).toBe(201);
            expectedEvents.push(['assertion.revoked', null, null]);
            model = null;
          } else {
            // Absent already (never stated, revoked, or expired): nothing appended, so an expired claim's newest event stays what it was.
            expect(res.status, res.text).toBe(200);
            expect(res.body.revoked).toBe(false);
          }
          continue;
        }
        const sent = c.kind === 'create' ? c.value : lastValue;
        const value = typeof sent === 'boolean' ? (sent ? 1 : 0) : sent;
        const expiresAt = c.expiresInMin === null ? null : now + c.expiresInMin * 60_000;
        const res = await api.assert({ ...subject, key: 'claim', value: sent, ...(expiresAt ? { expires_at: iso(expiresAt) } : {}) });
        const unchanged = live(model, now) && model.value === value && model.expiresAt === expiresAt;
        expect(res.status, res.text).toBe(unchanged ? 200 : 201);
        expect(res.body).toMatchObject({ key: 'claim', action: 'asserted', value, expires_at: iso(expiresAt) });
        entity = res.body.entity;
        if (!unchanged) expectedEvents.push(['assertion.created', value, iso(expiresAt)]);
        model = { value, expiresAt };
        lastValue = value;
      }
      const now = t.clock.now().getTime();
      if (entity) {
        const listed = (await api.list({ entity, key: 'claim' })).body.data;
        expect(listed.map((a: any) => [a.value, a.expires_at])).toEqual(live(model, now) ? [[model.value, iso(model.expiresAt)]] : []);
        const withExpired = (await api.list({ entity, key: 'claim', include_expired: true })).body.data;
        expect(withExpired).toHaveLength(model ? 1 : 0);
      }
      const events = await api.events();
      expect(events.map((e) => [e.type, e.data.value, e.data.expires_at])).toEqual(expectedEvents);
      for (const e of events) expect(e.data).toMatchObject({ entity, key: 'claim' });
    }),
    { numRuns: 25 },
  );
}, 240_000);
