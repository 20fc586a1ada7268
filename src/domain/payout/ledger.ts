import { z } from 'zod';
import { Prisma, type Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { periodEnd, periodStart } from '../enrollment/standing.ts';
import { capability, mutation, read, type Reader } from '../action/action.ts';
import { lockEntity } from '../entity/entity.ts';
import { ListInput, listOf, pageOf } from '../action/list.ts';
import { findProgram } from '../program/program.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { timestamp } from '../validation.ts';
import { IN_FLIGHT_STATUSES } from './presenter.ts';
import { isoTime } from '../shape.ts';

/**
 * The payout ledger (ADR 0009). Each closed period of an active, qualified
 * enrollment in a program with a tier ladder earns `value × rate_bps / 10000`
 * in minor units, where the rung is the highest its metric sums over that
 * period reach and `value` is the sum of that rung's metric. Entries are
 * append-only (the database refuses UPDATE and DELETE); each one records the
 * exact amount (`earned`), the integer `amount` rounded down after adding the
 * remainder the enrollment's previous entry carried, and the remainder it
 * carries on, so Σ amount + the last carry = Σ earned, exactly. A measurement
 * that changes a period already accrued appends an `adjustment` (the new
 * earning minus what the period's entries earned) payable in the first period
 * from it on in which nothing of the enrollment is paid or in flight; a
 * reversal appends a compensating entry payable by the same rule. An entry's
 * status is read from the payouts that link it: `paid` (a settled payout),
 * `in_flight` (a created one or one in review), else `unpaid`.
 */
export const ENTRY_KINDS = ['accrual', 'adjustment', 'reversal'] as const;
export const ENTRY_STATUSES = ['unpaid', 'in_flight', 'paid'] as const;
export type EntryStatus = (typeof ENTRY_STATUSES)[number];

export const LedgerEntry = z.object({
  id: z.string().describe('prefix le_'),
  object: z.literal('ledger_entry'),
  kind: z.enum(ENTRY_KINDS),
  entity: z.string(),
  program: z.string(),
  enrollment: z.string(),
  period_start: isoTime.describe('the period it is payable in'),
  period_end: isoTime.describe('exclusive'),
  source_period_start: isoTime.describe('the period whose performance earned it'),
  tier: z.string().nullable().describe('the rung reached (tier_), null: none, or not qualified'),
  metric: z.string().nullable(),
  value: z.number().describe("the sum of the rung's metric over the source period"),
  rate_bps: z.number().int(),
  earned: z.string().describe('the exact amount earned by this entry, a decimal in minor units'),
  amount: z.number().int().describe('integer minor units: earned plus the carried remainder, rounded down'),
  carry: z.string().describe('the remainder carried to the enrollment’s next entry'),
  status: z.enum(ENTRY_STATUSES),
  payout: z.string().nullable().describe('the payout paying it (created or settled), if any'),
  reverses: z.string().nullable().describe('on a reversal: the entry it compensates'),
  reason: z.string().nullable().describe('on a reversal: why it was made'),
  created_at: isoTime,
});
export type PublicLedgerEntry = z.output<typeof LedgerEntry>;

export const LedgerInput = z.strictObject({
  entity: z.string().min(1).optional(),
  program: z.string().min(1).optional(),
  period: timestamp().optional().describe('any instant of a period: entries payable in the period containing it'),
  status: z.enum(ENTRY_STATUSES).optional(),
  ...ListInput.shape,
});

/** Payout statuses (SQL lists): in flight (created, or held by the provider for review), and those holding entries. */
export const IN_FLIGHT = Prisma.raw(`(${IN_FLIGHT_STATUSES.map((s) => `'${s}'`).join(', ')})`);
export const HOLDING = Prisma.raw(`(${[...IN_FLIGHT_STATUSES, 'settled'].map((s) => `'${s}'`).join(', ')})`);

/** The payout (in flight or settled) that holds an entry, and the entry's status, as SQL columns of `l`. */
export const ENTRY_STATUS = Prisma.sql`
  (SELECT p.id FROM payout_item i JOIN payout p ON p.id = i.payout_id WHERE i.entry_id = l.id AND p.status IN ${HOLDING} LIMIT 1) AS payout_id,
  COALESCE((SELECT CASE WHEN p.status = 'settled' THEN 'paid' ELSE 'in_flight' END FROM payout_item i JOIN payout p ON p.id = i.payout_id
     WHERE i.entry_id = l.id AND p.status IN ${HOLDING} LIMIT 1), 'unpaid') AS status`;

export interface EntryRow {
  id: string;
  kind: (typeof ENTRY_KINDS)[number];
  entity_id: string;
  program_id: string;
  enrollment_id: string;
  period_start: Date;
  period_end: Date;
  source_period_start: Date;
  tier_id: string | null;
  metric: string | null;
  value: string;
  rate_bps: number;
  earned: string;
  amount: string;
  carry: string;
  status: EntryStatus;
  payout_id: string | null;
  reverses_id: string | null;
  reason: string | null;
  created_at: Date;
}

export const ENTRY_COLUMNS = Prisma.sql`l.id, l.kind, l.entity_id, l.program_id, l.enrollment_id, l.period_start, l.period_end, l.source_period_start,
  l.tier_id, l.metric, l.value::text AS value, l.rate_bps, l.earned::text AS earned, l.amount::text AS amount, l.carry::text AS carry,
  l.reverses_id, l.reason, l.created_at, ${ENTRY_STATUS}`;

/** A decimal's text without trailing zeros ("12.5000000000" → "12.5"). */
const trim = (d: string) => (d.includes('.') ? d.replace(/0+$/, '').replace(/\.$/, '') : d);

export const presentEntry = (r: EntryRow): PublicLedgerEntry => ({
  id: r.id,
  object: 'ledger_entry',
  kind: r.kind,
  entity: r.entity_id,
  program: r.program_id,
  enrollment: r.enrollment_id,
  period_start: new Date(r.period_start).toISOString(),
  period_end: new Date(r.period_end).toISOString(),
  source_period_start: new Date(r.source_period_start).toISOString(),
  tier: r.tier_id,
  metric: r.metric,
  value: Number(r.value),
  rate_bps: r.rate_bps,
  earned: trim(r.earned),
  amount: Number(r.amount),
  carry: trim(r.carry),
  status: r.status,
  payout: r.payout_id,
  reverses: r.reverses_id,
  reason: r.reason,
  created_at: new Date(r.created_at).toISOString(),
});

/** Programs whose enrollments accrue: those with a tier ladder (the rate lives on the rung). */
const LADDERED = (program: Prisma.Sql) => Prisma.sql`EXISTS (SELECT 1 FROM program_tier t WHERE t.program_id = ${program})`;

/** Where an enrollment's accrual stands: the start of its first period not yet accrued. */
const accrualFrom = Prisma.sql`COALESCE(n.accrued_until, ${periodStart(Prisma.sql`p.performance_window`, Prisma.sql`n.created_at`)})`;

/** Entities with an active enrollment whose closed periods are not all accrued at `now` (all, or only `entityIds`). */
export async function dueAccruals(db: Pick<Tx, '$queryRaw'>, now: Date, limit: number, entityIds?: string[]): Promise<string[]> {
  const only = entityIds
    ? Prisma.sql`AND n.entity_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(entityIds)}::jsonb))`
    : Prisma.empty;
  const rows = await db.$queryRaw<{ entity_id: string }[]>`
    SELECT DISTINCT n.entity_id FROM enrollment n JOIN program p ON p.id = n.program_id
     WHERE n.status = 'active' AND ${LADDERED(Prisma.sql`p.id`)}
       AND ${accrualFrom} < ${periodStart(Prisma.sql`p.performance_window`, Prisma.sql`${now}::timestamptz`)} ${only}
     ORDER BY 1 LIMIT ${limit}`;
  return rows.map((r) => r.entity_id);
}

interface DueEnrollment {
  id: string;
  program_id: string;
  entity_id: string;
  organization_id: string;
  brand_id: string;
  window: string;
  qualified: boolean;
  periods: { start: string; end: string }[];
}

/**
 * Accrues every closed period not yet accrued of the entity's active enrollments in laddered programs, one entry
 * per period (the caller holds the entity's lock), and moves `accrued_until` to the current period's start.
 * Standing is read as it is now: accrual runs at the period boundary, before anything evaluates the new period.
 */
export async function accrueEntity(deps: Deps, tx: Tx, entityId: string): Promise<number> {
  const now = Prisma.sql`${deps.clock.now()}::timestamptz`;
  const window = Prisma.sql`p.performance_window`;
  const current = periodStart(window, now);
  // Period starts are stepped in UTC wall time (timestamp without zone), then read back as instants.
  const due = await tx.$queryRaw<DueEnrollment[]>`
    SELECT n.id, n.program_id, n.entity_id, n.organization_id, p.brand_id, p.performance_window AS window,
           n.standing IN ('qualified', 'grace') AS qualified,
           (SELECT json_agg(json_build_object('start', s AT TIME ZONE 'UTC', 'end', ${periodEnd(window, Prisma.sql`s AT TIME ZONE 'UTC'`)}) ORDER BY s)
              FROM generate_series(${accrualFrom} AT TIME ZONE 'UTC', (${current} AT TIME ZONE 'UTC') - interval '1 millisecond',
                                   ('1 ' || p.performance_window)::interval) s) AS periods
      FROM enrollment n JOIN program p ON p.id = n.program_id
     WHERE n.entity_id = ${entityId} AND n.status = 'active' AND ${LADDERED(Prisma.sql`p.id`)} AND ${accrualFrom} < ${current}
     ORDER BY n.id`;
  let written = 0;
  for (const e of due) {
    for (const period of e.periods ?? []) {
      const start = new Date(period.start);
      written += await accruePeriod(deps, tx, e, start, new Date(period.end), { start, end: new Date(period.end) });
    }
    await tx.$executeRaw`UPDATE enrollment n SET accrued_until = ${current} FROM program p WHERE p.id = n.program_id AND n.id = ${e.id}`;
  }
  return written;
}

type EnrollmentRef = Pick<DueEnrollment, 'id' | 'program_id' | 'entity_id' | 'organization_id' | 'brand_id' | 'qualified'>;

/**
 * Appends what (enrollment, source period) earns beyond what its entries already earned: the period's accrual when
 * it has none, else an adjustment when the earning moved (nothing when it did not). The amount rounds down after
 * adding the enrollment's last carry; the new remainder is carried on.
 */
async function accruePeriod(
  deps: Deps,
  tx: Tx,
  e: EnrollmentRef,
  start: Date,
  end: Date,
  payable: { start: Date; end: Date },
): Promise<number> {
  return tx.$executeRaw`
    WITH ladder AS (
      SELECT t.id, t.metric, t.threshold, t.rate_bps,
             COALESCE((SELECT sum(m.value) FROM performance_measurement m
                        WHERE m.entity_id = ${e.entity_id} AND m.metric = t.metric AND (m.program_id IS NULL OR m.program_id = ${e.program_id})
                          AND m.occurred_at >= ${start}::timestamptz AND m.occurred_at < ${end}::timestamptz), 0) AS value
        FROM program_tier t WHERE t.program_id = ${e.program_id}),
    tier AS (SELECT * FROM ladder WHERE value >= threshold AND ${e.qualified}::boolean ORDER BY threshold DESC, id DESC LIMIT 1),
    target AS (
      SELECT (SELECT id FROM tier) AS tier_id, (SELECT metric FROM tier) AS metric, COALESCE((SELECT value FROM tier), 0) AS value,
             COALESCE((SELECT rate_bps FROM tier), 0) AS rate_bps, COALESCE((SELECT value * rate_bps * 0.0001 FROM tier), 0) AS earned),
    before AS (
      SELECT COALESCE(sum(earned), 0) AS earned, count(*) AS n FROM ledger_entry
       WHERE enrollment_id = ${e.id} AND source_period_start = ${start}::timestamptz AND kind <> 'reversal'),
    last AS (SELECT carry FROM ledger_entry WHERE enrollment_id = ${e.id} ORDER BY created_at DESC, id DESC LIMIT 1),
    d AS (SELECT t.*, t.earned - b.earned AS delta, b.n, t.earned - b.earned + COALESCE((SELECT carry FROM last), 0) AS owed FROM target t, before b)
    INSERT INTO ledger_entry (id, organization_id, brand_id, program_id, enrollment_id, entity_id, kind, period_start, period_end,
      source_period_start, qualified, tier_id, metric, value, rate_bps, earned, carry, amount, created_at)
    SELECT ${newId('ledgerEntry')}, ${e.organization_id}, ${e.brand_id}, ${e.program_id}, ${e.id}, ${e.entity_id},
           CASE WHEN d.n = 0 THEN 'accrual' ELSE 'adjustment' END, ${payable.start}::timestamptz, ${payable.end}::timestamptz,
           ${start}::timestamptz, ${e.qualified}::boolean, d.tier_id, d.metric, d.value, d.rate_bps, d.delta, d.owed - floor(d.owed), floor(d.owed)::bigint,
           ${deps.clock.now()}::timestamptz
      FROM d WHERE d.n = 0 OR d.delta <> 0`;
}

/**
 * The first period from `from` on, up to the current one, in which nothing of the enrollment is paid or in flight
 * (SQL, a timestamptz): where a late adjustment or a reversal is payable. Its own aliases are unlike any caller's
 * (`enrollment` and `from` name the caller's columns).
 */
const firstOpenPeriod = (enrollment: Prisma.Sql, from: Prisma.Sql, window: Prisma.Sql, now: Prisma.Sql) => Prisma.sql`
  (SELECT min(s) AT TIME ZONE 'UTC' FROM generate_series(${from} AT TIME ZONE 'UTC', ${periodStart(window, now)} AT TIME ZONE 'UTC',
            ('1 ' || ${window})::interval) s
    WHERE NOT EXISTS (SELECT 1 FROM ledger_entry held WHERE held.enrollment_id = ${enrollment} AND held.period_start = s AT TIME ZONE 'UTC'
      AND EXISTS (SELECT 1 FROM payout_item hi JOIN payout hp ON hp.id = hi.payout_id WHERE hi.entry_id = held.id AND hp.status IN ${HOLDING})))`;

/**
 * After a measurement batch (the caller holds the entities' locks, in id order): first the closed periods not yet
 * accrued, then an adjustment for every accrued period a new measurement falls in, payable in the first period
 * from it on in which nothing of the enrollment is paid or in flight.
 */
export async function accrueMeasured(deps: Deps, tx: Tx, entityIds: string[], measurementIds: string[]): Promise<void> {
  if (!entityIds.length) return;
  for (const id of await dueAccruals(tx, deps.clock.now(), entityIds.length, entityIds)) await accrueEntity(deps, tx, id);
  const window = Prisma.sql`p.performance_window`;
  const now = Prisma.sql`${deps.clock.now()}::timestamptz`;
  const late = await tx.$queryRaw<(EnrollmentRef & { start: Date; end: Date; payable_start: Date; payable_end: Date })[]>`
    WITH touched AS (
      SELECT DISTINCT a.id, a.program_id, a.entity_id, a.organization_id, p.brand_id, a.qualified, p.performance_window,
             ${periodStart(window, Prisma.sql`m.occurred_at`)} AS start, ${periodEnd(window, Prisma.sql`m.occurred_at`)} AS "end"
        FROM performance_measurement m
        JOIN enrollment n ON n.entity_id = m.entity_id AND (m.program_id IS NULL OR m.program_id = n.program_id)
        JOIN program p ON p.id = n.program_id
        JOIN LATERAL (SELECT n.id, n.program_id, n.entity_id, n.organization_id, l.qualified FROM ledger_entry l
                       WHERE l.enrollment_id = n.id AND l.kind = 'accrual' AND l.source_period_start = ${periodStart(window, Prisma.sql`m.occurred_at`)}) a ON true
       WHERE m.id IN (SELECT jsonb_array_elements_text(${JSON.stringify(measurementIds)}::jsonb)))
    SELECT t.id, t.program_id, t.entity_id, t.organization_id, t.brand_id, t.qualified, t.start, t."end",
           ${firstOpenPeriod(Prisma.sql`t.id`, Prisma.sql`t.start`, window, now)} AS payable_start
      FROM touched t JOIN program p ON p.id = t.program_id
     ORDER BY t.id, t.start`;
  for (const l of late) {
    const [payable] = await tx.$queryRaw<{ end: Date }[]>`
      SELECT ${periodEnd(Prisma.sql`p.performance_window`, Prisma.sql`${l.payable_start}::timestamptz`)} AS "end" FROM program p WHERE p.id = ${l.program_id}`;
    await accruePeriod(deps, tx, l, new Date(l.start), new Date(l.end), { start: new Date(l.payable_start), end: new Date(payable!.end) });
  }
}

/**
 * The ledger invariant as one SQL check: Σ ledger = settled payouts + payouts in flight + unpaid entries, every
 * payout's amount is the sum of its entries, and no entry is held by two live or settled payouts. In flight: created
 * payouts and those the provider holds for review. Suites call it
 * after payout runs (and after crash recovery); `ok` is the conjunction.
 */
export async function ledgerInvariant(db: Reader, organizationId?: string) {
  const org = organizationId ? Prisma.sql`AND organization_id = ${organizationId}` : Prisma.empty;
  const [row] = await db.$queryRaw<
    { ledger: string; settled: string; in_flight: string; unpaid: string; mismatched: number; doubly_held: number; negative: number }[]
  >`
    SELECT
      (SELECT COALESCE(sum(amount), 0)::text FROM ledger_entry WHERE true ${org}) AS ledger,
      (SELECT COALESCE(sum(amount), 0)::text FROM payout WHERE status = 'settled' ${org}) AS settled,
      (SELECT COALESCE(sum(amount), 0)::text FROM payout WHERE status IN ${IN_FLIGHT} ${org}) AS in_flight,
      (SELECT COALESCE(sum(l.amount), 0)::text FROM ledger_entry l WHERE true ${organizationId ? Prisma.sql`AND l.organization_id = ${organizationId}` : Prisma.empty}
          AND NOT EXISTS (SELECT 1 FROM payout_item i JOIN payout p ON p.id = i.payout_id WHERE i.entry_id = l.id AND p.status IN ${HOLDING})) AS unpaid,
      (SELECT count(*)::int FROM payout p WHERE true ${org}
          AND p.amount <> (SELECT COALESCE(sum(l.amount), 0) FROM payout_item i JOIN ledger_entry l ON l.id = i.entry_id WHERE i.payout_id = p.id)) AS mismatched,
      (SELECT count(*)::int FROM (SELECT i.entry_id FROM payout_item i JOIN payout p ON p.id = i.payout_id
          WHERE p.status IN ${HOLDING} GROUP BY i.entry_id HAVING count(*) > 1) x) AS doubly_held,
      (SELECT count(*)::int FROM payout WHERE amount <= 0 ${org}) AS negative`;
  const r = row!;
  const sums = { ledger: BigInt(r.ledger), settled: BigInt(r.settled), in_flight: BigInt(r.in_flight), unpaid: BigInt(r.unpaid) };
  return {
    ...sums,
    mismatched: r.mismatched,
    doubly_held: r.doubly_held,
    negative: r.negative,
    ok: sums.ledger === sums.settled + sums.in_flight + sums.unpaid && !r.mismatched && !r.doubly_held && !r.negative,
  };
}

/** One entry of the caller's brand (GraphQL `node(id:)`); 404 otherwise. */
export async function retrieveLedgerEntry(deps: Deps, caller: SurfaceBCaller, id: string): Promise<PublicLedgerEntry> {
  const [row] = isId('ledgerEntry', id)
    ? await deps.db.prisma.$queryRaw<EntryRow[]>`SELECT ${ENTRY_COLUMNS} FROM ledger_entry l
        WHERE l.id = ${id} AND l.organization_id = ${caller.organization.id} AND l.brand_id = ${caller.brand.id}`
    : [];
  if (!row) throw missing('ledger entry', id);
  return presentEntry(row);
}

async function findEntry(db: Reader, organizationId: string, brandId: string, id: string, param: string) {
  const row = isId('ledgerEntry', id)
    ? await db.ledgerEntry.findFirst({ where: { id, organizationId, brandId }, select: { id: true } })
    : null;
  if (!row) throw missing('ledger entry', id, param);
  return row;
}

/** The selected brand's entries, newest first, filtered by entity, program, period and status. */
async function listLedger(db: Reader, caller: SurfaceBCaller, input: z.output<typeof LedgerInput>) {
  const organizationId = caller.organization.id;
  if (input.program !== undefined) await findProgram(db, caller, input.program, 'program');
  if (
    input.entity !== undefined &&
    !(isId('entity', input.entity) && (await db.entity.findFirst({ where: { id: input.entity, organizationId } })))
  )
    throw missing('entity', input.entity, 'entity');
  const cursor =
    input.starting_after === undefined
      ? undefined
      : await findEntry(db, organizationId, caller.brand.id, input.starting_after, 'starting_after');
  const and = (cond: boolean, sql: Prisma.Sql) => (cond ? sql : Prisma.empty);
  const rows = await db.$queryRaw<EntryRow[]>`
    SELECT * FROM (SELECT ${ENTRY_COLUMNS} FROM ledger_entry l
      WHERE l.organization_id = ${organizationId} AND l.brand_id = ${caller.brand.id}
        ${and(input.entity !== undefined, Prisma.sql`AND l.entity_id = ${input.entity}`)}
        ${and(input.program !== undefined, Prisma.sql`AND l.program_id = ${input.program}`)}
        ${and(!!input.period, Prisma.sql`AND l.period_start <= ${input.period}::timestamptz AND l.period_end > ${input.period}::timestamptz`)}
        ${and(!!cursor, Prisma.sql`AND l.id < ${cursor?.id}`)}) x
    WHERE ${input.status ?? null}::text IS NULL OR x.status = ${input.status ?? null}::text
    ORDER BY x.id DESC LIMIT ${input.limit + 1}`;
  const page = pageOf(rows, input.limit);
  return { ...page, data: page.data.map(presentEntry) };
}

export const ReverseEntryInput = z.strictObject({
  reason: z.string().trim().min(1).max(500).describe('why the entry is reversed, kept on the compensating entry'),
});

/**
 * Reverses an entry by a compensating one (ADR 0009): kind `reversal`, `amount` and `earned` the entry's amount
 * negated, `reverses` the entry, the enrollment's carry passed on unchanged. It is payable in the first period from
 * the entry's on in which nothing of the enrollment is paid or in flight: an unpaid entry's reversal sits beside it
 * and nets it out of the next run; a paid (or in-flight) one's is a clawback that reduces the entity's next payout
 * (a net ≤ 0 is carried, never paid). An entry is reversed once (409); a reversal is final (409). Under the brand's
 * lock (a run's reserve step groups entries under it) and the entity's (accrual reads the carry under it).
 */
async function reverseEntry(deps: Deps, tx: Tx, caller: SurfaceBCaller, id: string, input: z.output<typeof ReverseEntryInput>) {
  const scope = Prisma.sql`l.organization_id = ${caller.organization.id} AND l.brand_id = ${caller.brand.id}`;
  const [entry] = isId('ledgerEntry', id)
    ? await tx.$queryRaw<
        { id: string; kind: string; entity_id: string }[]
      >`SELECT l.id, l.kind, l.entity_id FROM ledger_entry l WHERE l.id = ${id} AND ${scope}`
    : [];
  if (!entry) throw missing('ledger entry', id);
  if (entry.kind === 'reversal')
    throw new DomainError('resource_conflict', `The ledger entry ${id} is a reversal: a reversal is final and cannot be reversed`, null);
  await tx.$queryRaw`SELECT id FROM brand WHERE id = ${caller.brand.id} FOR UPDATE`;
  await lockEntity(tx, entry.entity_id);
  const [done] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM ledger_entry WHERE reverses_id = ${id}`;
  if (done) throw new DomainError('resource_conflict', `The ledger entry ${id} is already reversed by ${done.id}`, null);
  const now = Prisma.sql`${deps.clock.now()}::timestamptz`;
  const window = Prisma.sql`p.performance_window`;
  const reversal = newId('ledgerEntry');
  await tx.$executeRaw`
    WITH o AS (
      SELECT l.*, p.performance_window,
             COALESCE(${firstOpenPeriod(Prisma.sql`l.enrollment_id`, Prisma.sql`l.period_start`, window, now)}, ${periodStart(window, now)}) AS payable
        FROM ledger_entry l JOIN program p ON p.id = l.program_id WHERE l.id = ${id})
    INSERT INTO ledger_entry (id, organization_id, brand_id, program_id, enrollment_id, entity_id, kind, period_start, period_end,
      source_period_start, qualified, tier_id, metric, value, rate_bps, earned, carry, amount, reverses_id, reason, created_at)
    SELECT ${reversal}, o.organization_id, o.brand_id, o.program_id, o.enrollment_id, o.entity_id, 'reversal', o.payable,
           ${periodEnd(Prisma.sql`o.performance_window`, Prisma.sql`o.payable`)}, o.source_period_start, o.qualified, o.tier_id, o.metric,
           -o.value, o.rate_bps, -o.amount,
           COALESCE((SELECT carry FROM ledger_entry c WHERE c.enrollment_id = o.enrollment_id ORDER BY c.created_at DESC, c.id DESC LIMIT 1), 0),
           -o.amount, o.id, ${input.reason}, ${now}
      FROM o`;
  const [row] = await tx.$queryRaw<EntryRow[]>`SELECT ${ENTRY_COLUMNS} FROM ledger_entry l WHERE l.id = ${reversal}`;
  if (!row) throw missing('ledger entry', id);
  return presentEntry(row);
}

export const invalidPeriod = (param = 'period') =>
  new DomainError('invalid_request', 'period must be an RFC 3339 instant within the period, e.g. 2030-01-01T00:00:00Z', param);

/** The ledger's actions (src/domain/action/action.ts). */
export const ledger = capability({ name: 'payouts', title: 'Payouts', resource: 'payouts' })({
  list: read({
    name: 'payouts.ledger',
    summary: 'Ledger entries of the selected brand, newest first: what each enrollment earned per period, in integer minor units',
    input: LedgerInput,
    output: listOf(LedgerEntry),
    run: ({ caller, input, db }) => listLedger(db, caller, input),
  }),
  reverse: mutation({
    name: 'payouts.reverse_entry',
    summary:
      'Reverse a ledger entry by a compensating entry (negative amount, reverses = the entry): an unpaid entry nets out of the next run, a paid one is clawed back from the next payout; an entry is reversed once, a reversal is final (409)',
    params: ['id'],
    input: ReverseEntryInput,
    output: LedgerEntry,
    outcome: 'created',
    run: ({ deps, caller, params, input, db }) => reverseEntry(deps, db, caller, params.id, input),
  }),
});
