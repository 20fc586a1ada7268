import type { AssertionClaim, Enrollment, ProgramRequirement } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { appendEvent } from '../event/event.ts';
import { lockEntity } from '../entity/entity.ts';
import { presentEnrollment } from './presenter.ts';

/**
 * Enrollment standing: the spec's state table plus DESIGN.md's grace rule.
 *
 *   not_qualified + passing                  -> qualified       enrollment.qualified
 *   qualified     + failing, grace > 0       -> grace           (silent; grace_ends_at = now + grace)
 *   qualified     + failing, grace = 0       -> not_qualified   enrollment.disqualified
 *   grace         + passing                  -> qualified       (silent)
 *   grace         + failing, window over     -> not_qualified   enrollment.disqualified (trigger grace_expired)
 *
 * Every evaluation runs under the entity lock (lockEntity), in the same
 * transaction as its cause, so one committed change produces at most one
 * standing event per enrollment and concurrent causes never both emit.
 */
export type Standing = 'not_qualified' | 'qualified' | 'grace';
export type Trigger = 'assertion' | 'expiry' | 'grace_expired' | 'requirement_change' | 'activation';

export interface RequirementResult {
  requirement: string;
  metric: string;
  operator: string;
  threshold: number | null;
  /** The claim value the rule saw; absent or expired claims read as 0. */
  value: number;
  present: boolean;
  passed: boolean;
}

export interface Evaluation {
  trigger: Trigger;
  /** The `asrt_` event that caused an `assertion` evaluation. */
  assertion?: string;
  evaluated_at: string;
  qualified: boolean;
  requirements: RequirementResult[];
}

export const ASSERT_METRIC = /^assert:([a-z][a-z0-9_]{0,63})$/;

/** A claim counts while present and unexpired at `now`; expiry needs no event. */
export const claimLive = (c: Pick<AssertionClaim, 'present' | 'expiresAt'> | undefined, now: Date): boolean =>
  !!c && c.present && (c.expiresAt === null || c.expiresAt > now);

export function checkRequirement(r: ProgramRequirement, claims: Map<string, AssertionClaim>, now: Date): RequirementResult {
  const key = ASSERT_METRIC.exec(r.metric)?.[1];
  const claim = key ? claims.get(key) : undefined;
  const present = claimLive(claim, now);
  const value = present ? (claim!.value ?? 0) : 0;
  const t = r.threshold ?? 0;
  const passed = {
    exists: present && value !== 0,
    gte: value >= t,
    lte: value <= t,
    eq: value === t,
    neq: value !== t,
  }[r.operator as 'exists' | 'gte' | 'lte' | 'eq' | 'neq'];
  return { requirement: r.id, metric: r.metric, operator: r.operator, threshold: r.threshold, value, present, passed: !!passed };
}

export interface Transition {
  standing: Standing;
  graceEndsAt: Date | null;
  /** The public event this move emits, if any. */
  emits?: 'enrollment.qualified' | 'enrollment.disqualified';
  /** Set when the move is the grace window running out, whatever caused the evaluation. */
  graceExpired?: boolean;
}

/** The standing state machine, pure: where an enrollment goes given whether it passes now. */
export function nextStanding(current: Standing, graceEndsAt: Date | null, passed: boolean, now: Date, graceSeconds: number): Transition {
  if (passed) {
    if (current === 'not_qualified') return { standing: 'qualified', graceEndsAt: null, emits: 'enrollment.qualified' };
    return { standing: 'qualified', graceEndsAt: null };
  }
  if (current === 'qualified') {
    if (graceSeconds > 0) return { standing: 'grace', graceEndsAt: new Date(now.getTime() + graceSeconds * 1000) };
    return { standing: 'not_qualified', graceEndsAt: null, emits: 'enrollment.disqualified' };
  }
  if (current === 'grace' && graceEndsAt && graceEndsAt > now) return { standing: 'grace', graceEndsAt };
  if (current === 'grace') return { standing: 'not_qualified', graceEndsAt: null, emits: 'enrollment.disqualified', graceExpired: true };
  return { standing: 'not_qualified', graceEndsAt: null };
}

export interface EvaluationCause {
  trigger: Trigger;
  assertion?: string;
}

/**
 * Re-evaluates the entity's active enrollments (optionally of one program)
 * inside `tx`, taking the entity lock first. Returns the number of standing
 * events emitted.
 */
export async function evaluateEntityStanding(
  deps: Deps,
  tx: Tx,
  entityId: string,
  cause: EvaluationCause,
  only: { programId?: string; alreadyLocked?: boolean } = {},
): Promise<number> {
  if (!only.alreadyLocked) await lockEntity(tx, entityId);
  const enrollments = await tx.enrollment.findMany({
    where: { entityId, status: 'active', ...(only.programId ? { programId: only.programId } : {}) },
    orderBy: { id: 'asc' },
  });
  if (!enrollments.length) return 0;
  const programIds = [...new Set(enrollments.map((e) => e.programId))];
  const [programs, requirements, claimRows] = await Promise.all([
    tx.program.findMany({ where: { id: { in: programIds } } }),
    tx.programRequirement.findMany({ where: { programId: { in: programIds } }, orderBy: { id: 'asc' } }),
    tx.assertionClaim.findMany({ where: { entityId } }),
  ]);
  const claims = new Map(claimRows.map((c) => [c.key, c]));
  const now = deps.clock.now();
  let emitted = 0;
  for (const enrollment of enrollments) {
    const program = programs.find((p) => p.id === enrollment.programId)!;
    const results = requirements.filter((r) => r.programId === program.id).map((r) => checkRequirement(r, claims, now));
    const passed = results.every((r) => r.passed);
    if (await applyStanding(deps, tx, enrollment, program.gracePeriodSeconds, passed, results, cause, now)) emitted++;
  }
  return emitted;
}

async function applyStanding(
  deps: Deps,
  tx: Tx,
  enrollment: Enrollment,
  graceSeconds: number,
  passed: boolean,
  results: RequirementResult[],
  cause: EvaluationCause,
  now: Date,
): Promise<boolean> {
  const previous = enrollment.standing as Standing;
  const move = nextStanding(previous, enrollment.graceEndsAt, passed, now, graceSeconds);
  const trigger: Trigger = move.graceExpired ? 'grace_expired' : cause.trigger;
  const evaluation: Evaluation = {
    trigger,
    ...(cause.assertion ? { assertion: cause.assertion } : {}),
    evaluated_at: now.toISOString(),
    qualified: passed,
    requirements: results,
  };
  const updated = await tx.enrollment.update({
    where: { id: enrollment.id },
    data: { standing: move.standing, graceEndsAt: move.graceEndsAt, evaluation: evaluation as object, evaluatedAt: now, updatedAt: now },
  });
  if (!move.emits) return false;
  await appendEvent(deps, tx, {
    organizationId: enrollment.organizationId,
    type: move.emits,
    subject: { type: 'enrollment', id: enrollment.id },
    data: { ...presentEnrollment(updated), previous_status: previous, trigger },
  });
  return true;
}
