import { expect } from 'vitest';
import { buildTenant, feedEvents, type HttpResponse, type TestApp } from '../support/kit.ts';

export const ALL_SCOPES = [
  'assertions:read',
  'assertions:write',
  'programs:read',
  'program_requirements:read',
  'program_requirements:write',
  'enrollments:read',
  'enrollments:write',
  'events:read',
  'performance:read',
  'performance:write',
];

export const ASRT = /^asrt_[0-9a-f]{32}$/;
export const ENT = /^ent_[0-9a-f]{32}$/;

/** Thin REST client for the routes of this suite. */
export function api(t: TestApp, token: string) {
  const opts = (headers?: Record<string, string>) => ({ token, headers });
  const qs = (q: Record<string, unknown>) => {
    const s = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)])).toString();
    return s ? `?${s}` : '';
  };
  return {
    assert: (body: unknown, headers?: Record<string, string>) => t.http.post('/v1/platform/assertions', body, opts(headers)),
    revoke: (body: unknown, headers?: Record<string, string>) => t.http.post('/v1/platform/assertions/revoke', body, opts(headers)),
    list: (q: Record<string, unknown>) => t.http.get(`/v1/platform/assertions${qs(q)}`, opts()),
    event: (id: string) => t.http.get(`/v1/platform/assertions/${id}`, opts()),
    createProgram: (body: unknown) => t.http.post('/v1/platform/programs', body, opts()),
    program: (id: string) => t.http.get(`/v1/platform/programs/${id}`, opts()),
    programs: (q: Record<string, unknown> = {}) => t.http.get(`/v1/platform/programs${qs(q)}`, opts()),
    addRequirement: (program: string, body: unknown) => t.http.post(`/v1/platform/programs/${program}/requirements`, body, opts()),
    requirements: (program: string) => t.http.get(`/v1/platform/programs/${program}/requirements`, opts()),
    removeRequirement: (program: string, id: string) => t.http.delete(`/v1/platform/programs/${program}/requirements/${id}`, opts()),
    enroll: (body: unknown) => t.http.post('/v1/platform/enrollments', body, opts()),
    move: (id: string, action: 'approve' | 'reject' | 'activate') =>
      t.http.post(`/v1/platform/enrollments/${id}/${action}`, undefined, opts()),
    enrollment: (id: string) => t.http.get(`/v1/platform/enrollments/${id}`, opts()),
    enrollments: (q: Record<string, unknown> = {}) => t.http.get(`/v1/platform/enrollments${qs(q)}`, opts()),
    events: (type?: string) => feedEvents(t, token, type ? `type=${type}` : ''),
    measure: (measurements: unknown[], headers?: Record<string, string>) =>
      t.http.post('/v1/platform/performance/measurements', { measurements }, opts(headers)),
    rollups: (q: Record<string, unknown>) => t.http.get(`/v1/platform/performance/rollups${qs(q)}`, opts()),
  };
}

export type Api = ReturnType<typeof api>;

export async function setup(t: TestApp, scopes = ALL_SCOPES) {
  const { org, token } = await buildTenant(t, scopes);
  return { org, token, api: api(t, token) };
}

export function expectStatus(res: HttpResponse, status: number) {
  expect(res.status, res.text).toBe(status);
  return res.body;
}

/** A program with requirements, and an entity's enrollment in it moved to active. */
export async function activeEnrollment(
  a: Api,
  opts: {
    grace?: number;
    /** The program's performance_window (default: the server's, month). */
    window?: 'day' | 'week' | 'month';
    requirements?: { metric: string; operator: string; threshold?: number }[];
    subject?: Record<string, string>;
  } = {},
) {
  const program = expectStatus(
    await a.createProgram({
      name: 'Creators',
      grace_period_seconds: opts.grace ?? 0,
      ...(opts.window ? { performance_window: opts.window } : {}),
    }),
    201,
  );
  for (const r of opts.requirements ?? [{ metric: 'assert:verified', operator: 'exists' }])
    expectStatus(await a.addRequirement(program.id, r), 201);
  const subject = opts.subject ?? { external_user_id: `u-${Math.random().toString(36).slice(2)}`, issuer: 'https://idp.example' };
  const enrollment = expectStatus(await a.enroll({ program: program.id, ...subject }), 201);
  expectStatus(await a.move(enrollment.id, 'approve'), 200);
  expectStatus(await a.move(enrollment.id, 'activate'), 200);
  return { program, enrollment, entity: enrollment.entity as string, subject: { entity: enrollment.entity as string } };
}

/** Standing events of one enrollment, in feed order. */
export async function standingEvents(a: Api, enrollmentId: string) {
  return (await a.events()).filter(
    (e) => (e.type === 'enrollment.qualified' || e.type === 'enrollment.disqualified') && e.subject.id === enrollmentId,
  );
}
