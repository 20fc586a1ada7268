import { expect } from 'vitest';
import { runDueEvaluations } from '../../src/domain/enrollment/due-evaluation.ts';
import { ledgerInvariant } from '../../src/domain/payout/ledger.ts';
import { type Api, api as assertionsApi, expectStatus } from '../assertion/helpers.ts';
import { buildTenant, type TestApp } from '../support/kit.ts';

/** Fixtures for the payout suites: a tenant, a laddered program, qualified enrollments, measurements, period closes. */
export const PAYOUT_SCOPES = [
  'programs:read',
  'program_requirements:write',
  'program_tiers:write',
  'enrollments:read',
  'enrollments:write',
  'events:read',
  'performance:write',
  'payouts:read',
  'payouts:write',
];

export const idp = 'https://idp.example';
const DAY = 86_400_000;

export async function payoutTenant(t: TestApp, scopes = PAYOUT_SCOPES) {
  const { org, token } = await buildTenant(t, scopes);
  const api = assertionsApi(t, token);
  const qs = (q: Record<string, unknown>) => new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)])).toString();
  return {
    org,
    token,
    brand: org.brands[0]!.id as string,
    api,
    ledger: (q: Record<string, unknown> = {}) => t.http.get(`/v1/platform/payouts/ledger?${qs(q)}`, { token }),
    payouts: (q: Record<string, unknown> = {}) => t.http.get(`/v1/platform/payouts?${qs(q)}`, { token }),
    payout: (id: string) => t.http.get(`/v1/platform/payouts/${id}`, { token }),
    /** POST /payouts/runs; the wrapped operation is unwrapped into `body` (errors keep theirs). */
    run: async (body: unknown, key?: string) => {
      const res = await t.http.post('/v1/platform/payouts/runs', body, { token, headers: key ? { 'idempotency-key': key } : undefined });
      return res.status === 202 ? Object.assign(res, { body: res.body.operation }) : res;
    },
  };
}

/** A program paying `rate_bps` of `sales` from the first unit (one rung, threshold 0), with a daily window. */
export async function paidProgram(t: TestApp, a: Api, token: string, rate_bps = 250, window: 'day' | 'week' | 'month' = 'day') {
  const program = expectStatus(await a.createProgram({ name: 'Paid', performance_window: window }), 201);
  const tier = await t.http.post(
    `/v1/platform/programs/${program.id}/tiers`,
    { name: 'Base', metric: 'sales', threshold: 0, rate_bps },
    { token },
  );
  expect(tier.status, tier.text).toBe(202);
  return program as { id: string };
}

/** An active (and, with no requirements, qualified) enrollment of `user` in `programId`. */
export async function activeIn(a: Api, programId: string, user: string) {
  const e = expectStatus(await a.enroll({ program: programId, external_user_id: user, issuer: idp }), 201);
  expectStatus(await a.move(e.id, 'approve'), 200);
  expectStatus(await a.move(e.id, 'activate'), 200);
  return e as { id: string; entity: string };
}

/** Moves the clock to the first instant of the next UTC day and runs the scheduler's due work (accrual, standing). */
export async function nextDay(t: TestApp) {
  const now = t.clock.now().getTime();
  t.clock.advance(Math.floor(now / DAY) * DAY + DAY - now);
  await runDueEvaluations(t.app.deps);
}

/** The ledger invariant holds for the organization (the SQL check). */
export async function expectInvariant(t: TestApp, orgId?: string) {
  const inv = await ledgerInvariant(t.app.deps.db.prisma, orgId);
  expect(
    inv,
    JSON.stringify(inv, (_, v) => (typeof v === 'bigint' ? String(v) : v)),
  ).toMatchObject({ ok: true });
  return inv;
}

/** The operation once `pred` holds for it (each change awaited through the worker, never a sleep). */
export async function operationWhen(t: TestApp, token: string, id: string, pred: (op: any) => boolean) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const stop = new AbortController();
    const changed = t.app.operations.nextChange(id, Math.max(0, deadline - Date.now()), stop.signal);
    const res = await t.http.get(`/v1/platform/operations/${id}`, { token });
    if (pred(res.body.operation)) {
      stop.abort();
      return res.body.operation;
    }
    if (Date.now() >= deadline) throw new Error(`operation ${id} still ${res.body.operation?.status}`);
    await changed;
  }
}

// Only for test/payout/export-memory.test.ts, which another change owns: every other test imports db-access.ts.
