import { describe, expect } from 'vitest';
import { runDueEvaluations } from '../../src/domain/enrollment/due-evaluation.ts';
import { appTest, type TestApp } from '../support/kit.ts';
import { activeEnrollment, expectStatus, setup, standingEvents } from './helpers.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const HOUR = 3600_000;

/** Several processes (or a process's poller and a caller) running the due evaluations at once. */
describe('due evaluations racing', () => {
  test('a grace window that ran out is evaluated once: one disqualified event, and its grace_expired evaluation is not stamped over', async () => {
    const { api } = await setup(t);
    const { enrollment, subject } = await activeEnrollment(api, { grace: 3600 });
    expectStatus(await api.assert({ ...subject, key: 'verified', value: true }), 201);
    expectStatus(await api.revoke({ ...subject, key: 'verified' }), 201);
    t.clock.advance(HOUR);
    const emitted = await Promise.all([1, 2, 3, 4].map(() => runDueEvaluations(t.app.deps)));
    await t.app.sequencer.flush();
    expect(emitted.reduce((a, b) => a + b, 0)).toBe(1);
    const read = expectStatus(await api.enrollment(enrollment.id), 200);
    expect(read).toMatchObject({ standing: 'not_qualified', evaluation: { trigger: 'grace_expired', qualified: false } });
    const events = await standingEvents(api, enrollment.id);
    expect(events.map((e) => [e.type, e.data.trigger])).toEqual([
      ['enrollment.qualified', 'assertion'],
      ['enrollment.disqualified', 'grace_expired'],
    ]);
  });
});
