import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { PUBLIC_EVENT_TYPES } from '../../src/domain/event/types.ts';
import { appTest, type TestApp } from '../support/kit.ts';
import { ALL_SCOPES, deployments, drain, events, launch, operationsConfig, sandbox, tenant, topUp, verb } from '../operations/helpers.ts';

const test = appTest({ config: operationsConfig() });
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

/**
 * Types no route can produce yet. payout.* come with payouts, built by another
 * helper at the same time: once merged, produce them below and empty this list
 * (the test fails while a listed type is produced, so the list cannot go stale).
 */
const EXPECTED_MISSING = ['payout.created', 'payout.settled', 'payout.failed'];

const P = '/v1/platform';
const SCOPES = [
  ...ALL_SCOPES,
  'operations:read',
  'relationships:write',
  'enrollments:write',
  'programs:read',
  'program_requirements:write',
  'assertions:write',
];

test('every public event type is produced by real routes (payout.* expected missing until payouts land)', async () => {
  const who = await tenant(t, SCOPES);
  const post = async (path: string, body?: unknown, status = 200) => {
    const res = await t.http.post(`${P}${path}`, body, { token: who.token, headers: { 'idempotency-key': randomUUID() } });
    expect(res.status, `${path}: ${res.text}`).toBe(status);
    return res.body;
  };
  await topUp(t, who.brand, 1000);

  // distribution.launching/completed, deployment.created/activated/drifted/completed, budget.reserved/released, operation.succeeded.
  await launch(t, who, { budget: 1000, deployments: [sandbox({ spend: 300, complete: true, drift: true })] });
  await drain(t);
  // distribution.live, then .paused/.resumed with deployment.paused, then .canceled with deployment.cancel_requested/.canceled.
  const live = await launch(t, who, { deployments: [sandbox()] });
  await drain(t);
  for (const v of ['pause', 'resume', 'cancel'] as const) {
    expect((await verb(t, who, live.distribution.id, v)).status).toBe(202);
    await drain(t);
  }
  // operation.cancel_requested/.canceled/.superseded: a cancel of a launch waiting on review.
  const waiting = await launch(t, who, { deployments: [sandbox({ outcome: 'review' })] });
  await drain(t);
  expect((await verb(t, who, waiting.distribution.id, 'cancel')).status).toBe(202);
  await drain(t);
  // deployment.rejected: the provider's review says no.
  const reviewed = await launch(t, who, { deployments: [sandbox({ outcome: 'review' })] });
  await drain(t);
  const [inReview] = await deployments(t, who, reviewed.distribution.id);
  const decided = await t.http.post(
    `/operator/sandbox/deployments/${inReview.id}/review`,
    { decision: 'reject' },
    { token: t.operatorToken },
  );
  expect(decided.status, decided.text).toBe(200);
  await drain(t);
  // distribution.failed, operation.failed.
  await launch(t, who, { deployments: [sandbox({ outcome: 'fail' })] });
  await drain(t);
  // deployment.cleanup_failed: a teardown the provider refuses.
  const stuck = await launch(t, who, { deployments: [sandbox({ cleanup: 'fail' })] });
  await drain(t);
  expect((await verb(t, who, stuck.distribution.id, 'cancel')).status).toBe(202);
  await drain(t);
  // budget.reserve_failed: more budget than the wallet holds.
  await launch(t, who, { budget: 1_000_000, deployments: [sandbox()] });
  await drain(t);

  // relationship.*
  const rel = await post('/relationships', { external_user_id: randomUUID(), issuer: 'https://idp.example' }, 201);
  for (const move of ['activate', 'pause', 'resume', 'end']) await post(`/relationships/${rel.id}/${move}`);

  // enrollment.*, assertion.*: qualified by a claim, disqualified when it is revoked; another enrollment rejected.
  const program = await post('/programs', { name: 'Vocabulary', grace_period_seconds: 0 }, 201);
  await post(`/programs/${program.id}/requirements`, { metric: 'assert:verified', operator: 'exists' }, 201);
  const subject = { external_user_id: randomUUID(), issuer: 'https://idp.example' };
  const enrollment = await post('/enrollments', { program: program.id, ...subject }, 201);
  for (const move of ['approve', 'activate']) await post(`/enrollments/${enrollment.id}/${move}`);
  await post('/assertions', { ...subject, key: 'verified' }, 201);
  await post('/assertions/revoke', { ...subject, key: 'verified' }, 201);
  const rejected = await post('/enrollments', { program: program.id, external_user_id: randomUUID(), issuer: 'https://idp.example' }, 201);
  await post(`/enrollments/${rejected.id}/reject`);

  await drain(t);
  const produced = new Set((await events(t, who)).map((e) => e.type as string));
  const missing = PUBLIC_EVENT_TYPES.filter((type) => !produced.has(type));
  expect(missing).toEqual(EXPECTED_MISSING);
});
