import type { AssertionClaim, Enrollment, ProgramRequirement } from '../../db/generated/client.ts';
import type { Prisma, Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { insertEvents, type NewEvent } from '../event/event.ts';
import { lockEntity } from '../entity/entity.ts';
import { type STANDING_TRIGGERS, presentEnrollment, type Standing } from './presenter.ts';
import { execute } from '../../db/database.ts';
import { readStandingInputs, standingUpdateStatement } from './store.ts';

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
 * The standings themselves (STANDINGS) belong to the public object: presenter.ts.
 */
export type Trigger = (typeof STANDING_TRIGGERS)[number];

export interface RequirementResult {
  requirement: string;
  metric: string;
  operator: string;
  threshold: number | null;
  /** The value the rule saw: the claim's (absent or expired claims read as 0), or the metric's sum over the program's current period (0 without measurements). */
  value: number;
  present: boolean;
  passed: boolean;
}

/** One rung of the ladder as an evaluation saw it (ladder order: threshold, then id). */
export interface TierResult {
  tier: string;
  metric: string;
  threshold: number;
  value: number;
  reached: boolean;
}

/** The enrollment's current tier: the highest rung of its program's ladder whose threshold its metric sum meets. */
export interface CurrentTier {
  id: string;
  name: string;
  rate_bps: number;
  metric: string;
  threshold: number;
  value: number;
}

export interface Evaluation {
  trigger: Trigger;
  /** The `asrt_` event that caused an `assertion` evaluation. */
  assertion?: string;
  evaluated_at: string;
  qualified: boolean;
  requirements: RequirementResult[];
  /** Why the enrollment has its tier: every rung with the sum it saw (absent when the program has no ladder). */
  tiers?: TierResult[];
}

/** What a requirement reads: `assert:<key>` (a claim) or `metric:<key>` (a measured metric, summed over the program's current period). */
export const REQUIREMENT_METRIC = /^(assert|metric):([a-z][a-z0-9_]{0,63})$/;

/** A metric's sum over one program's current period, as the standing inputs carry it. */
export interface MetricTotal {
  programId: string;
  key: string;
  value: number;
  count: number;
}

const metricSlot = (programId: string, key: string) => `${programId}\u0000${key}`;

/** A claim counts while present and unexpired at `now`; expiry needs no event. */
export const claimLive = (c: Pick<AssertionClaim, 'present' | 'expiresAt'> | undefined, now: Date): boolean =>
  !!c && c.present && (c.expiresAt === null || c.expiresAt > now);

function requirementValue(
  r: Pick<ProgramRequirement, 'programId' | 'metric'>,
  claims: Map<string, Pick<AssertionClaim, 'present' | 'value' | 'expiresAt'>>,
  metrics: Map<string, MetricTotal>,
  now: Date,
): { present: boolean; value: number } {
  const [, source, key] = REQUIREMENT_METRIC.exec(r.metric) ?? [];
  if (source === 'metric') {
    const total = metrics.get(metricSlot(r.programId, key!));
    return { present: !!total && total.count > 0, value: total?.value ?? 0 };
  }
  const claim = key ? claims.get(key) : undefined;
  const present = claimLive(claim, now);
  return { present, value: present ? (claim!.value ?? 0) : 0 };
}

export function checkRequirement(
  r: Pick<ProgramRequirement, 'id' | 'programId' | 'metric' | 'operator' | 'threshold'>,
  claims: Map<string, Pick<AssertionClaim, 'present' | 'value' | 'expiresAt'>>,
  metrics: Map<string, MetricTotal>,
  now: Date,
): RequirementResult {
  const { present, value } = requirementValue(r, claims, metrics, now);
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
 * What an evaluation reads, in one statement: the active enrollments with
 * their program's grace, the requirements, the claims, and the sums of the
 * metrics that `metric:<key>` requirements name over each program's current period.
 */
export interface StandingInputs {
  enrollments: (Enrollment & { gracePeriodSeconds: number; brandId: string })[];
  requirements: Pick<ProgramRequirement, 'id' | 'programId' | 'metric' | 'operator' | 'threshold'>[];
  claims: Pick<AssertionClaim, 'key' | 'present' | 'value' | 'expiresAt'>[];
  metrics: MetricTotal[];
  /** The ladders of the enrollments' programs, in ladder order. */
  tiers: { id: string; programId: string; name: string; metric: string; threshold: number; rateBps: number }[];
}

/** The ladder of one program against its metric sums: every rung, and the highest reached. */
export function placeOnLadder(
  ladder: StandingInputs['tiers'],
  metrics: Map<string, MetricTotal>,
): { results: TierResult[]; current: CurrentTier | null } {
  let current: CurrentTier | null = null;
  const results = ladder.map((t) => {
    const value = metrics.get(metricSlot(t.programId, t.metric))?.value ?? 0;
    const reached = value >= t.threshold;
    if (reached) current = { id: t.id, name: t.name, rate_bps: t.rateBps, metric: t.metric, threshold: t.threshold, value };
    return { tier: t.id, metric: t.metric, threshold: t.threshold, value, reached };
  });
  return { results, current };
}

/** The SQL of a UTC period's bounds lives in the store; payout's ledger reads them from here. */

const date = (v: unknown) => (v == null ? null : new Date(v as string));

/** The `inputs` column as typed rows (JSON carries timestamps as text). */
export function parseStandingInputs(raw: unknown): StandingInputs {
  const r = raw as StandingInputs;
  return {
    enrollments: r.enrollments.map((e) => ({
      ...e,
      graceEndsAt: date(e.graceEndsAt),
      evaluatedAt: date(e.evaluatedAt),
      createdAt: date(e.createdAt)!,
      updatedAt: date(e.updatedAt)!,
    })),
    requirements: r.requirements,
    claims: r.claims.map((c) => ({ ...c, expiresAt: date(c.expiresAt) })),
    metrics: r.metrics,
    tiers: r.tiers,
  };
}

/**
 * One evaluation, set-based: every enrollment's new standing as one UPDATE
 * statement, and the events its moves emit (the caller appends them, in one
 * statement with its own), whatever the number of enrollments. Run under
 * the entity lock, in the transaction of the cause.
 */
export function planStanding(inputs: StandingInputs, cause: EvaluationCause, now: Date): { statements: Prisma.Sql[]; events: NewEvent[] } {
  if (!inputs.enrollments.length) return { statements: [], events: [] };
  const claims = new Map(inputs.claims.map((c) => [c.key, c]));
  const metrics = new Map(inputs.metrics.map((m) => [metricSlot(m.programId, m.key), m]));
  const updates: { id: string; standing: Standing; grace_ends_at: Date | null; evaluation: Evaluation; tier: CurrentTier | null }[] = [];
  const events: NewEvent[] = [];
  for (const enrollment of inputs.enrollments) {
    const results = inputs.requirements
      .filter((r) => r.programId === enrollment.programId)
      .map((r) => checkRequirement(r, claims, metrics, now));
    const passed = results.every((r) => r.passed);
    const previous = enrollment.standing as Standing;
    const move = nextStanding(previous, enrollment.graceEndsAt, passed, now, enrollment.gracePeriodSeconds);
    const trigger: Trigger = move.graceExpired ? 'grace_expired' : cause.trigger;
    const ladder = inputs.tiers.filter((t) => t.programId === enrollment.programId);
    const placed = placeOnLadder(ladder, metrics);
    const evaluation: Evaluation = {
      trigger,
      ...(cause.assertion ? { assertion: cause.assertion } : {}),
      evaluated_at: now.toISOString(),
      qualified: passed,
      requirements: results,
      ...(ladder.length ? { tiers: placed.results } : {}),
    };
    updates.push({ id: enrollment.id, standing: move.standing, grace_ends_at: move.graceEndsAt, evaluation, tier: placed.current });
    if (!move.emits) continue;
    const { gracePeriodSeconds: _, brandId, ...row } = enrollment;
    const updated: Enrollment = {
      ...row,
      standing: move.standing,
      graceEndsAt: move.graceEndsAt,
      evaluation: evaluation as object,
      tier: placed.current as object | null,
      evaluatedAt: now,
      updatedAt: now,
    };
    events.push({
      organizationId: enrollment.organizationId,
      type: move.emits,
      subject: { type: 'enrollment', id: enrollment.id },
      data: { ...presentEnrollment(updated), previous_status: previous, trigger },
      brandId,
    });
  }
  return { statements: [standingUpdateStatement(updates, now)], events };
}

/**
 * Re-evaluates the entity's active enrollments (optionally of one program)
 * inside `tx`, taking the entity lock first: one read, then the plan's
 * statements. Returns the number of standing events emitted.
 */
export async function evaluateEntityStanding(
  deps: Deps,
  tx: Tx,
  entityId: string,
  cause: EvaluationCause,
  only: { programId?: string; alreadyLocked?: boolean } = {},
): Promise<number> {
  if (!only.alreadyLocked) await lockEntity(tx, entityId);
  const now = deps.clock.now();
  const plan = planStanding(parseStandingInputs(await readStandingInputs(tx, entityId, now, only.programId)), cause, now);
  await execute(tx, plan.statements);
  if (!plan.events.length) return 0;
  await execute(tx, [insertEvents(deps, plan.events)]);
  deps.db.afterCommit(tx, () => deps.sequencer.kick());
  return plan.events.length;
}
