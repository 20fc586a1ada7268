import { describe, expect } from 'vitest';
import { runDueEvaluations } from '../../src/domain/enrollment/due-evaluation.ts';
import { invoke } from '../../src/domain/action/action.ts';
import { assertions } from '../../src/domain/assertion/assertion.ts';
import { appTest, expectPlatformError, type TestApp } from '../support/kit.ts';
import { activeEnrollment, expectStatus, setup, standingEvents } from './helpers.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const HOUR = 3600_000;
const inMs = (ms: number) => new Date(t.clock.now().getTime() + ms).toISOString();
const due = async () => {
  const n = await runDueEvaluations(t.app.deps);
  await t.app.sequencer.flush();
  return n;
};

describe('programs, requirements and the enrollment lifecycle', () => {
  test('creates a program with a grace period and requirements; lists and retrieves them in the selected brand', async () => {
    const { api } = await setup(t);
    const program = expectStatus(await api.createProgram({ name: 'Creators', gracePeriodSeconds: 3600 }), 201);
    expect(program).toMatchObject({
      id: expect.stringMatching(/^prog_[0-9a-f]{32}$/),
      object: 'program',
      name: 'Creators',
      grace_period_seconds: 3600,
      requirements: [],
    });
    const req = expectStatus(await api.addRequirement(program.id, { metric: 'assert:followers', operator: 'gte', threshold: 1000 }), 201);
    expect(req).toMatchObject({
      id: expect.stringMatching(/^req_[0-9a-f]{32}$/),
      object: 'program_requirement',
      program: program.id,
      metric: 'assert:followers',
      operator: 'gte',
      threshold: 1000,
    });
    expect(expectStatus(await api.program(program.id), 200).requirements).toEqual([req]);
    expect(expectStatus(await api.requirements(program.id), 200)).toEqual({ object: 'list', data: [req], has_more: false });
    expect(expectStatus(await api.programs(), 200).data.map((p: any) => p.id)).toEqual([program.id]);
    expect(expectStatus(await api.removeRequirement(program.id, req.id), 200)).toEqual({
      id: req.id,
      object: 'program_requirement',
      deleted: true,
    });
    expect(expectStatus(await api.requirements(program.id), 200).data).toEqual([]);
  });

  test('pending → approved → active emits enrollment.created, .approved, .activated; reject from pending emits .rejected', async () => {
    const { api } = await setup(t);
    const program = expectStatus(await api.createProgram({ name: 'P' }), 201);
    const e = expectStatus(await api.enroll({ program: program.id, external_user_id: 'u1', issuer: 'idp' }), 201);
    expect(e).toMatchObject({
      object: 'enrollment',
      program: program.id,
      status: 'pending',
      standing: 'not_qualified',
      evaluation: null,
      grace_ends_at: null,
    });
    expectPlatformError(await api.move(e.id, 'activate'), 409, 'invalid_state_transition');
    expect(expectStatus(await api.move(e.id, 'approve'), 200).status).toBe('approved');
    expectPlatformError(await api.move(e.id, 'approve'), 409, 'invalid_state_transition');
    expect(expectStatus(await api.move(e.id, 'activate'), 200).status).toBe('active');
    expectPlatformError(await api.move(e.id, 'reject'), 409, 'invalid_state_transition');
    const other = expectStatus(await api.enroll({ program: program.id, external_user_id: 'u2', issuer: 'idp' }), 201);
    expect(expectStatus(await api.move(other.id, 'reject'), 200).status).toBe('rejected');
    expectPlatformError(await api.enroll({ program: program.id, entity: e.entity }), 409, 'resource_conflict', 'program');
    const types = (await api.events())
      .filter((x) => x.type.startsWith('enrollment.'))
      .map((x) => `${x.type} ${x.subject.id === e.id ? 'e' : 'other'}`);
    // A program with no requirements qualifies everyone at activation.
    expect(types).toEqual([
      'enrollment.created e',
      'enrollment.approved e',
      'enrollment.activated e',
      'enrollment.qualified e',
      'enrollment.created other',
      'enrollment.rejected other',
    ]);
    expect(expectStatus(await api.enrollments({ program: program.id, status: 'active' }), 200).data.map((x: any) => x.id)).toEqual([e.id]);
    expect(expectStatus(await api.enrollments({ entity: e.entity }), 200).data.map((x: any) => x.id)).toEqual([e.id]);
  });

  test('standing is not evaluated before activation', async () => {
    const { api } = await setup(t);
    const program = expectStatus(await api.createProgram({ name: 'P' }), 201);
    expectStatus(await api.addRequirement(program.id, { metric: 'assert:verified', operator: 'exists' }), 201);
    const e = expectStatus(await api.enroll({ program: program.id, external_user_id: 'u1', issuer: 'idp' }), 201);
    expectStatus(await api.assert({ entity: e.entity, key: 'verified', value: true }), 201);
    expect(expectStatus(await api.enrollment(e.id), 200)).toMatchObject({ standing: 'not_qualified', evaluation: null });
    expectStatus(await api.move(e.id, 'approve'), 200);
    const active = expectStatus(await api.move(e.id, 'activate'), 200);
    expect(active).toMatchObject({ standing: 'qualified', evaluation: { trigger: 'activation', qualified: true } });
  });
});

describe('Enrollment standing state table', () => {
  test('not_qualified → qualified on an assertion: enrollment.qualified once, with previous_status and trigger; the evaluation is readable', async () => {
    const { api } = await setup(t);
    const { enrollment, subject } = await activeEnrollment(api);
    expect(expectStatus(await api.enrollment(enrollment.id), 200)).toMatchObject({
      standing: 'not_qualified',
      evaluation: { trigger: 'activation', qualified: false },
    });
    const a = expectStatus(await api.assert({ ...subject, key: 'verified', value: true }), 201);
    const events = await standingEvents(api, enrollment.id);
    expect(events).toHaveLength(1);
    expect(events[0].type).toBe('enrollment.qualified');
    expect(events[0].data).toMatchObject({
      id: enrollment.id,
      standing: 'qualified',
      previous_status: 'not_qualified',
      trigger: 'assertion',
    });
    const read = expectStatus(await api.enrollment(enrollment.id), 200);
    expect(read.standing).toBe('qualified');
    expect(read.evaluation).toEqual({
      trigger: 'assertion',
      assertion: a.id,
      evaluated_at: t.clock.now().toISOString(),
      qualified: true,
      requirements: [
        {
          requirement: expect.stringMatching(/^req_/),
          metric: 'assert:verified',
          operator: 'exists',
          threshold: null,
          value: 1,
          present: true,
          passed: true,
        },
      ],
    });
    // A second passing change is no transition.
    expectStatus(await api.assert({ ...subject, key: 'verified', value: 2 }), 201);
    expect(await standingEvents(api, enrollment.id)).toHaveLength(1);
  });

  test('qualified → not_qualified directly (grace 0): enrollment.disqualified with previous_status qualified', async () => {
    const { api } = await setup(t);
    const { enrollment, subject } = await activeEnrollment(api, { grace: 0 });
    expectStatus(await api.assert({ ...subject, key: 'verified', value: true }), 201);
    expectStatus(await api.revoke({ ...subject, key: 'verified' }), 201);
    const events = await standingEvents(api, enrollment.id);
    expect(events.map((e) => [e.type, e.data.previous_status, e.data.trigger])).toEqual([
      ['enrollment.qualified', 'not_qualified', 'assertion'],
      ['enrollment.disqualified', 'qualified', 'assertion'],
    ]);
  });

  test('qualified → grace emits nothing; grace → qualified (passing again) emits nothing', async () => {
    const { api } = await setup(t);
    const { enrollment, subject } = await activeEnrollment(api, { grace: 3600 });
    expectStatus(await api.assert({ ...subject, key: 'verified', value: true }), 201);
    expectStatus(await api.assert({ ...subject, key: 'verified', value: false }), 201);
    const inGrace = expectStatus(await api.enrollment(enrollment.id), 200);
    expect(inGrace).toMatchObject({ standing: 'grace', grace_ends_at: inMs(HOUR) });
    t.clock.advance(HOUR / 2);
    expectStatus(await api.assert({ ...subject, key: 'verified', value: true }), 201);
    expect(expectStatus(await api.enrollment(enrollment.id), 200)).toMatchObject({ standing: 'qualified', grace_ends_at: null });
    expect((await standingEvents(api, enrollment.id)).map((e) => e.type)).toEqual(['enrollment.qualified']);
  });

  test('grace → not_qualified when the window runs out: the scheduled evaluation emits enrollment.disqualified (trigger grace_expired) once', async () => {
    const { api } = await setup(t);
    const { enrollment, subject } = await activeEnrollment(api, { grace: 3600 });
    expectStatus(await api.assert({ ...subject, key: 'verified', value: true }), 201);
    expectStatus(await api.revoke({ ...subject, key: 'verified' }), 201);
    t.clock.advance(HOUR - 1);
    await due();
    expect(expectStatus(await api.enrollment(enrollment.id), 200).standing).toBe('grace');
    t.clock.advance(1);
    await due();
    await due();
    const read = expectStatus(await api.enrollment(enrollment.id), 200);
    expect(read).toMatchObject({
      standing: 'not_qualified',
      grace_ends_at: null,
      evaluation: { trigger: 'grace_expired', qualified: false },
    });
    const events = await standingEvents(api, enrollment.id);
    expect(events.map((e) => [e.type, e.data.previous_status, e.data.trigger])).toEqual([
      ['enrollment.qualified', 'not_qualified', 'assertion'],
      ['enrollment.disqualified', 'grace', 'grace_expired'],
    ]);
  });

  test('a claim reaching expires_at re-evaluates at that time (trigger expiry) without any assertion event', async () => {
    const { api } = await setup(t);
    const { enrollment, subject } = await activeEnrollment(api, { grace: 0 });
    expectStatus(await api.assert({ ...subject, key: 'verified', value: true, expires_at: inMs(HOUR) }), 201);
    t.clock.advance(HOUR - 1);
    expect(await due()).toBe(0);
    t.clock.advance(1);
    await due(); // the background poller may have got there first: the events below prove exactly once
    expect(await due()).toBe(0);
    const events = await standingEvents(api, enrollment.id);
    expect(events.map((e) => [e.type, e.data.trigger])).toEqual([
      ['enrollment.qualified', 'assertion'],
      ['enrollment.disqualified', 'expiry'],
    ]);
    expect((await api.events()).filter((e) => e.type.startsWith('assertion.'))).toHaveLength(1);
  });

  test('an expiry followed by the grace window: silent grace at expiry, disqualified when the window ends', async () => {
    const { api } = await setup(t);
    const { enrollment, subject } = await activeEnrollment(api, { grace: 600 });
    expectStatus(await api.assert({ ...subject, key: 'verified', value: true, expires_at: inMs(HOUR) }), 201);
    t.clock.advance(HOUR);
    await due();
    expect(expectStatus(await api.enrollment(enrollment.id), 200)).toMatchObject({ standing: 'grace', evaluation: { trigger: 'expiry' } });
    t.clock.advance(600_000);
    await due();
    expect((await standingEvents(api, enrollment.id)).map((e) => [e.type, e.data.previous_status, e.data.trigger])).toEqual([
      ['enrollment.qualified', 'not_qualified', 'assertion'],
      ['enrollment.disqualified', 'grace', 'grace_expired'],
    ]);
  });

  test('the background scheduler runs the due evaluation without a test calling it', async () => {
    const { api } = await setup(t);
    const { enrollment, subject } = await activeEnrollment(api, { grace: 0 });
    expectStatus(await api.assert({ ...subject, key: 'verified', value: true, expires_at: inMs(HOUR) }), 201);
    t.clock.advance(HOUR);
    await expect
      .poll(async () => (await api.enrollment(enrollment.id)).body.standing, { timeout: 5000, interval: 100 })
      .toBe('not_qualified');
    expect((await standingEvents(api, enrollment.id)).map((e) => e.type)).toEqual(['enrollment.qualified', 'enrollment.disqualified']);
  });

  test('a requirement change re-evaluates active enrollments (trigger requirement_change)', async () => {
    const { api } = await setup(t);
    const { program, enrollment, subject } = await activeEnrollment(api, { grace: 0 });
    expectStatus(await api.assert({ ...subject, key: 'verified', value: true }), 201);
    expectStatus(await api.assert({ ...subject, key: 'followers', value: 500 }), 201);
    const req = expectStatus(await api.addRequirement(program.id, { metric: 'assert:followers', operator: 'gte', threshold: 1000 }), 201);
    expectStatus(await api.removeRequirement(program.id, req.id), 200);
    expect((await standingEvents(api, enrollment.id)).map((e) => [e.type, e.data.trigger])).toEqual([
      ['enrollment.qualified', 'assertion'],
      ['enrollment.disqualified', 'requirement_change'],
      ['enrollment.qualified', 'requirement_change'],
    ]);
  });

  test.each([
    [
      'exists',
      undefined,
      [
        [true, true],
        [false, false],
        [0.5, true],
        [-1, true],
      ],
    ],
    [
      'gte',
      10,
      [
        [10, true],
        [9.99, false],
        [11, true],
      ],
    ],
    [
      'lte',
      10,
      [
        [10, true],
        [10.01, false],
        [-5, true],
      ],
    ],
    [
      'eq',
      3,
      [
        [3, true],
        [4, false],
      ],
    ],
    [
      'neq',
      3,
      [
        [3, false],
        [4, true],
      ],
    ],
  ] as const)('operator %s (threshold %s) compares the claim value', async (operator, threshold, cases) => {
    const { api } = await setup(t);
    const { enrollment, subject } = await activeEnrollment(api, {
      requirements: [{ metric: 'assert:score', operator, ...(threshold !== undefined ? { threshold } : {}) }],
    });
    for (const [value, qualified] of cases) {
      expectStatus(await api.assert({ ...subject, key: 'score', value }), 201);
      expect(expectStatus(await api.enrollment(enrollment.id), 200).standing, `${operator} ${threshold} value ${value}`).toBe(
        qualified ? 'qualified' : 'not_qualified',
      );
    }
  });

  test('an absent claim reads as 0 for numeric operators (lte 0 passes, neq 0 fails)', async () => {
    const { api } = await setup(t);
    const lte = await activeEnrollment(api, { requirements: [{ metric: 'assert:strikes', operator: 'lte', threshold: 0 }] });
    expect(expectStatus(await api.enrollment(lte.enrollment.id), 200).standing).toBe('qualified');
    const neq = await activeEnrollment(api, { requirements: [{ metric: 'assert:strikes', operator: 'neq', threshold: 0 }] });
    expect(expectStatus(await api.enrollment(neq.enrollment.id), 200)).toMatchObject({
      standing: 'not_qualified',
      evaluation: { requirements: [{ value: 0, present: false, passed: false }] },
    });
  });
});

describe('exactly once under concurrency', () => {
  test('50 concurrent writes flipping one enrollment produce exactly one standing event per real transition', async () => {
    const { api } = await setup(t);
    const { enrollment, subject } = await activeEnrollment(api, { grace: 0 });
    const writes = await Promise.all(Array.from({ length: 50 }, (_, i) => api.assert({ ...subject, key: 'verified', value: i % 2 === 0 })));
    for (const w of writes) expect([200, 201], w.text).toContain(w.status);
    // Claim writes are serialized by the entity lock, and ids are generated under it: id order is commit order.
    const changes = [...new Map(writes.filter((w) => w.status === 201).map((w) => [w.body.id, w.body])).values()].sort((a, b) =>
      a.id.localeCompare(b.id),
    );
    let standing = 'not_qualified';
    const expected: [string, string][] = [];
    for (const c of changes) {
      const passes = c.value !== 0;
      if (passes && standing === 'not_qualified') expected.push(['enrollment.qualified', c.id]);
      if (!passes && standing === 'qualified') expected.push(['enrollment.disqualified', c.id]);
      standing = passes ? 'qualified' : 'not_qualified';
    }
    const events = await standingEvents(api, enrollment.id);
    expect(events.map((e) => [e.type, e.data.evaluation.assertion])).toEqual(expected);
    expect(expected.length).toBeGreaterThan(0);
    expect(expectStatus(await api.enrollment(enrollment.id), 200).standing).toBe(standing);
  });

  // Concurrent writes share commits (src/db/group-commit.ts); two writes to one entity never share one, however the
  // entity is named: each write reads what the one before it committed.
  test('concurrent writes to one entity, named by its id and by its external pair, each read the claims before them: every key holds its write, one standing event', async () => {
    const { api } = await setup(t);
    const pair = { external_user_id: `u-${Math.random().toString(36).slice(2)}`, issuer: 'https://idp.example' };
    const { enrollment, entity } = await activeEnrollment(api, { grace: 0, subject: pair });
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    const writes = await Promise.all([
      ...keys.map((key, i) => api.assert({ ...(i % 2 ? { entity } : pair), key, value: i })),
      api.assert({ ...pair, key: 'verified', value: true }),
      api.assert({ entity, key: 'verified', value: true }),
    ]);
    for (const w of writes) expect([200, 201], w.text).toContain(w.status);
    // The two writes of `verified` are one change: one of them appends, the other finds it in place.
    expect(
      writes
        .slice(-2)
        .map((w) => w.status)
        .sort(),
    ).toEqual([200, 201]);
    const claims = expectStatus(await api.list({ entity, limit: 100 }), 200).data as { key: string; value: number }[];
    expect(Object.fromEntries(claims.map((c) => [c.key, c.value]))).toEqual({
      ...Object.fromEntries(keys.map((k, i) => [k, i])),
      verified: 1,
    });
    expect(await api.events('assertion.created')).toHaveLength(keys.length + 1);
    expect((await standingEvents(api, enrollment.id)).map((e) => e.type)).toEqual(['enrollment.qualified']);
  });

  test('the same change started in one tick by id and by external pair: one appends, the other finds it in place', async () => {
    const { api, token } = await setup(t);
    const pair = { external_user_id: `u-${Math.random().toString(36).slice(2)}`, issuer: 'https://idp.example' };
    const { entity } = await activeEnrollment(api, { grace: 0, subject: pair });
    const caller = await t.app.gate.authorizeProvisionally({ bearer: token });
    for (const value of [true, false, true, false]) {
      // Started together in-process, both are in the forming group when it goes: the entity, named late, parts them.
      const answers = await Promise.all(
        [pair, { entity }].map((s) => invoke({ deps: t.app.deps, caller }, assertions.create, { input: { ...s, key: 'verified', value } })),
      );
      expect(answers.map((a) => a.outcome).sort()).toEqual(['created', 'ok']);
    }
    expect(await api.events('assertion.created')).toHaveLength(4);
  });
});
