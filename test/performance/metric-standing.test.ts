import { describe, expect } from 'vitest';
import { runDueEvaluations } from '../../src/domain/enrollment/due-evaluation.ts';
import { appTest, expectPlatformError, type TestApp } from '../support/kit.ts';
import { activeEnrollment, expectStatus, setup, standingEvents } from '../assertion/helpers.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const ago = (ms: number) => new Date(t.clock.now().getTime() - ms).toISOString();
const due = async () => {
  const n = await runDueEvaluations(t.app.deps);
  await t.app.sequencer.flush();
  return n;
};

describe('metric:<key> requirements drive standing', () => {
  test('a requirement on a metric is accepted, validated, and read as the sum over the current period', async () => {
    const { api } = await setup(t);
    const program = expectStatus(await api.createProgram({ name: 'P', performance_window: 'week' }), 201);
    expect(program.performance_window).toBe('week');
    expect(expectStatus(await api.createProgram({ name: 'Default' }), 201).performance_window).toBe('month');
    expectPlatformError(await api.createProgram({ name: 'X', performance_window: 'year' }), 400, 'invalid_request', 'performance_window');
    expectPlatformError(
      await api.addRequirement(program.id, { metric: 'metric:Sales', operator: 'gte', threshold: 1 }),
      400,
      'invalid_request',
      'metric',
    );
    expectPlatformError(
      await api.addRequirement(program.id, { metric: 'perf:sales', operator: 'gte', threshold: 1 }),
      400,
      'invalid_request',
      'metric',
    );
    const req = expectStatus(await api.addRequirement(program.id, { metric: 'metric:sales', operator: 'gte', threshold: 10 }), 201);
    expect(req.metric).toBe('metric:sales');
  });

  test('measurements that reach the threshold qualify once (trigger metric); other programs and metrics do not count', async () => {
    const { api } = await setup(t);
    const { enrollment, entity, program } = await activeEnrollment(api, {
      window: 'month',
      requirements: [{ metric: 'metric:sales', operator: 'gte', threshold: 10 }],
    });
    const other = expectStatus(await api.createProgram({ name: 'Other' }), 201);
    expect(expectStatus(await api.enrollment(enrollment.id), 200).standing).toBe('not_qualified');
    const m = (value: number, extra: Record<string, unknown> = {}) => ({
      entity,
      metric: 'sales',
      value,
      occurred_at: ago(1000),
      ...extra,
    });
    expectStatus(await api.measure([m(4), m(100, { metric: 'views' }), m(100, { program: other.id })]), 201);
    await t.app.sequencer.flush();
    expect(expectStatus(await api.enrollment(enrollment.id), 200)).toMatchObject({
      standing: 'not_qualified',
      evaluation: {
        trigger: 'metric',
        qualified: false,
        requirements: [{ metric: 'metric:sales', value: 4, present: true, passed: false }],
      },
    });
    expectStatus(await api.measure([m(6, { program: program.id })]), 201);
    await t.app.sequencer.flush();
    const events = await standingEvents(api, enrollment.id);
    expect(events.map((e) => [e.type, e.data.trigger, e.data.previous_status])).toEqual([
      ['enrollment.qualified', 'metric', 'not_qualified'],
    ]);
    expect(events[0]!.data.evaluation.requirements[0]).toMatchObject({ value: 10, passed: true });
    // More measurements keep it qualified and emit nothing.
    expectStatus(await api.measure([m(1)]), 201);
    await t.app.sequencer.flush();
    expect(await standingEvents(api, enrollment.id)).toHaveLength(1);
  });

  test('a measurement dated in an earlier period does not count toward the current one', async () => {
    const { api } = await setup(t);
    const { enrollment, entity } = await activeEnrollment(api, {
      window: 'day',
      requirements: [{ metric: 'metric:sales', operator: 'gte', threshold: 1 }],
    });
    expectStatus(await api.measure([{ entity, metric: 'sales', value: 50, occurred_at: ago(3 * 86_400_000) }]), 201);
    await t.app.sequencer.flush();
    expect(expectStatus(await api.enrollment(enrollment.id), 200)).toMatchObject({
      standing: 'not_qualified',
      evaluation: { trigger: 'metric', requirements: [{ value: 0, present: false }] },
    });
  });

  test('50 concurrent measurement batches flipping standing: exactly one qualified event', async () => {
    const { api } = await setup(t);
    const { enrollment, entity } = await activeEnrollment(api, {
      requirements: [{ metric: 'metric:sales', operator: 'gte', threshold: 25 }],
    });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        api.measure([{ entity, metric: 'sales', value: 1, occurred_at: ago(1000), external_id: `c-${i}` }]),
      ),
    );
    for (const r of results) expect(r.status, r.text).toBe(201);
    await t.app.sequencer.flush();
    const events = await standingEvents(api, enrollment.id);
    expect(events.map((e) => e.type)).toEqual(['enrollment.qualified']);
    expect(events[0]!.data.evaluation.requirements[0].value).toBe(25);
    expect(expectStatus(await api.enrollment(enrollment.id), 200).evaluation.requirements[0].value).toBe(50);
  });

  test('a new period starts from zero: the standing falls at the boundary without a measurement (trigger period), once', async () => {
    const { api } = await setup(t);
    const { enrollment, entity } = await activeEnrollment(api, {
      window: 'day',
      requirements: [{ metric: 'metric:sales', operator: 'gte', threshold: 1 }],
    });
    expectStatus(await api.measure([{ entity, metric: 'sales', value: 1, occurred_at: ago(0) }]), 201);
    await t.app.sequencer.flush();
    expect(expectStatus(await api.enrollment(enrollment.id), 200).standing).toBe('qualified');
    expect(await due()).toBe(0);
    const now = t.clock.now();
    const nextDay = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    t.clock.advance(nextDay - now.getTime() - 1);
    expect(await due()).toBe(0);
    t.clock.advance(1);
    expect(await due()).toBe(1);
    expect(await due()).toBe(0);
    const events = await standingEvents(api, enrollment.id);
    expect(events.map((e) => [e.type, e.data.trigger])).toEqual([
      ['enrollment.qualified', 'metric'],
      ['enrollment.disqualified', 'period'],
    ]);
    expect(events[1]!.data.evaluation.requirements[0]).toMatchObject({ value: 0, present: false, passed: false });
  });
});
