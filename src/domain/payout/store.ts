import { Prisma, type Tx } from '../../db/database.ts';
import type { Payout, PayoutItem, PayoutRun, PrismaClient } from '../../db/generated/client.ts';
import { periodEnd, periodStart } from '../enrollment/store.ts';
import { IN_FLIGHT_STATUSES } from './presenter.ts';

/**
 * The SQL of the payout ledger, payout runs and payouts (docs/architecture.md "Stores", ADR 0009). The ledger's
 * queries do their arithmetic in SQL (numeric, exact): an entry's amounts are never computed in JavaScript.
 */
type Db = Tx | PrismaClient;

/** Which rows: the brand's (a caller selecting a brand has this shape). */
export interface BrandScope {
  organization: { id: string };
  brand: { id: string };
}

/** A page's lower bound (list.ts's `newestFirst`). */
type Below = { id?: { lt: string } };

// The ledger

export type EntryKind = 'accrual' | 'adjustment' | 'reversal';
export type EntryStatus = 'unpaid' | 'in_flight' | 'paid';

/** Payout statuses (SQL lists): in flight (created, or held by the provider for review), and those holding entries. */
const IN_FLIGHT = Prisma.raw(`(${IN_FLIGHT_STATUSES.map((s) => `'${s}'`).join(', ')})`);
const HOLDING = Prisma.raw(`(${[...IN_FLIGHT_STATUSES, 'settled'].map((s) => `'${s}'`).join(', ')})`);

/** The payout (in flight or settled) that holds an entry, and the entry's status, as SQL columns of `l`. */
const ENTRY_STATUS = Prisma.sql`
  (SELECT p.id FROM payout_item i JOIN payout p ON p.id = i.payout_id WHERE i.entry_id = l.id AND p.status IN ${HOLDING} LIMIT 1) AS payout_id,
  COALESCE((SELECT CASE WHEN p.status = 'settled' THEN 'paid' ELSE 'in_flight' END FROM payout_item i JOIN payout p ON p.id = i.payout_id
     WHERE i.entry_id = l.id AND p.status IN ${HOLDING} LIMIT 1), 'unpaid') AS status`;

export interface EntryRow {
  id: string;
  kind: EntryKind;
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

const ENTRY_COLUMNS = Prisma.sql`l.id, l.kind, l.entity_id, l.program_id, l.enrollment_id, l.period_start, l.period_end, l.source_period_start,
  l.tier_id, l.metric, l.value::text AS value, l.rate_bps, l.earned::text AS earned, l.amount::text AS amount, l.carry::text AS carry,
  l.reverses_id, l.reason, l.created_at, ${ENTRY_STATUS}`;

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

export interface DueEnrollment {
  id: string;
  program_id: string;
  entity_id: string;
  organization_id: string;
  brand_id: string;
  window: string;
  qualified: boolean;
  periods: { start: string; end: string }[];
}

/** The entity's active enrollments in laddered programs with closed periods not yet accrued at `now`, and those periods. */
export function dueEnrollments(tx: Tx, entityId: string, at: Date): Promise<DueEnrollment[]> {
  const now = Prisma.sql`${at}::timestamptz`;
  const window = Prisma.sql`p.performance_window`;
  const current = periodStart(window, now);
  // Period starts are stepped in UTC wall time (timestamp without zone), then read back as instants.
  return tx.$queryRaw<DueEnrollment[]>`
    SELECT n.id, n.program_id, n.entity_id, n.organization_id, p.brand_id, p.performance_window AS window,
           n.standing IN ('qualified', 'grace') AS qualified,
           (SELECT json_agg(json_build_object('start', s AT TIME ZONE 'UTC', 'end', ${periodEnd(window, Prisma.sql`s AT TIME ZONE 'UTC'`)}) ORDER BY s)
              FROM generate_series(${accrualFrom} AT TIME ZONE 'UTC', (${current} AT TIME ZONE 'UTC') - interval '1 millisecond',
                                   ('1 ' || p.performance_window)::interval) s) AS periods
      FROM enrollment n JOIN program p ON p.id = n.program_id
     WHERE n.entity_id = ${entityId} AND n.status = 'active' AND ${LADDERED(Prisma.sql`p.id`)} AND ${accrualFrom} < ${current}
     ORDER BY n.id`;
}

/** Moves the enrollment's accrual to the start of the period containing `at` (the enrollment's `accrued_until`). */
export async function markAccrued(tx: Tx, enrollmentId: string, at: Date): Promise<void> {
  const current = periodStart(Prisma.sql`p.performance_window`, Prisma.sql`${at}::timestamptz`);
  await tx.$executeRaw`UPDATE enrollment n SET accrued_until = ${current} FROM program p WHERE p.id = n.program_id AND n.id = ${enrollmentId}`;
}

export type EnrollmentRef = Pick<DueEnrollment, 'id' | 'program_id' | 'entity_id' | 'organization_id' | 'brand_id' | 'qualified'>;

/**
 * Appends what (enrollment, source period) earns beyond what its entries already earned: the period's accrual when
 * it has none, else an adjustment when the earning moved (nothing when it did not). The amount rounds down after
 * adding the enrollment's last carry; the new remainder is carried on. The number of entries written (0 or 1).
 */
export function insertAccrual(
  tx: Tx,
  e: EnrollmentRef,
  a: { id: string; start: Date; end: Date; payable: { start: Date; end: Date }; now: Date },
): Promise<number> {
  const { start, end, payable } = a;
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
    SELECT ${a.id}, ${e.organization_id}, ${e.brand_id}, ${e.program_id}, ${e.id}, ${e.entity_id},
           CASE WHEN d.n = 0 THEN 'accrual' ELSE 'adjustment' END, ${payable.start}::timestamptz, ${payable.end}::timestamptz,
           ${start}::timestamptz, ${e.qualified}::boolean, d.tier_id, d.metric, d.value, d.rate_bps, d.delta, d.owed - floor(d.owed), floor(d.owed)::bigint,
           ${a.now}::timestamptz
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

export type LateAccrual = EnrollmentRef & { start: Date; end: Date; payable_start: Date; payable_end: Date };

/**
 * The accrued periods the measurements fall in (one row per enrollment and source period), each with the first
 * period from it on in which nothing of the enrollment is paid or in flight (`payable_start`).
 */
export function lateAccruals(tx: Tx, measurementIds: string[], at: Date): Promise<LateAccrual[]> {
  const window = Prisma.sql`p.performance_window`;
  const now = Prisma.sql`${at}::timestamptz`;
  return tx.$queryRaw<LateAccrual[]>`
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
}

/** The end of the program's period that starts at `start`. */
export async function periodEndOf(tx: Tx, programId: string, start: Date): Promise<Date> {
  const [payable] = await tx.$queryRaw<{ end: Date }[]>`
      SELECT ${periodEnd(Prisma.sql`p.performance_window`, Prisma.sql`${start}::timestamptz`)} AS "end" FROM program p WHERE p.id = ${programId}`;
  return payable!.end;
}

export interface LedgerTotals {
  ledger: string;
  settled: string;
  in_flight: string;
  unpaid: string;
  mismatched: number;
  doubly_held: number;
  negative: number;
}

/**
 * The ledger invariant's terms in one statement (ledger.ts `ledgerInvariant`): the sums of the ledger, of settled
 * payouts, of payouts in flight and of unpaid entries; payouts whose amount is not the sum of their entries; entries
 * held by two live or settled payouts; payouts of no positive amount.
 */
export async function ledgerTotals(db: Db, organizationId?: string): Promise<LedgerTotals> {
  const org = organizationId ? Prisma.sql`AND organization_id = ${organizationId}` : Prisma.empty;
  const [row] = await db.$queryRaw<LedgerTotals[]>`
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
  return row!;
}

/** One entry of the brand, with its status. */
export async function brandEntry(db: Db, scope: BrandScope, id: string): Promise<EntryRow | undefined> {
  const [row] = await db.$queryRaw<EntryRow[]>`SELECT ${ENTRY_COLUMNS} FROM ledger_entry l
        WHERE l.id = ${id} AND l.organization_id = ${scope.organization.id} AND l.brand_id = ${scope.brand.id}`;
  return row;
}

/** Whether the brand has the entry (a list's cursor). */
export function brandEntryId(db: Db, scope: BrandScope, id: string): Promise<{ id: string } | null> {
  return db.ledgerEntry.findFirst({ where: { id, organizationId: scope.organization.id, brandId: scope.brand.id }, select: { id: true } });
}

export interface LedgerFilter {
  entity?: string;
  program?: string;
  /** Entries payable in the period containing it. */
  period?: Date;
  status?: EntryStatus;
  /** Entries below this id (the page's cursor). */
  below?: string;
}

/** The brand's entries, newest first, filtered (the status is computed, so it filters the computed rows). */
export function ledgerPage(db: Db, scope: BrandScope, f: LedgerFilter, take: number): Promise<EntryRow[]> {
  const and = (cond: boolean, sql: Prisma.Sql) => (cond ? sql : Prisma.empty);
  return db.$queryRaw<EntryRow[]>`
    SELECT * FROM (SELECT ${ENTRY_COLUMNS} FROM ledger_entry l
      WHERE l.organization_id = ${scope.organization.id} AND l.brand_id = ${scope.brand.id}
        ${and(f.entity !== undefined, Prisma.sql`AND l.entity_id = ${f.entity}`)}
        ${and(f.program !== undefined, Prisma.sql`AND l.program_id = ${f.program}`)}
        ${and(!!f.period, Prisma.sql`AND l.period_start <= ${f.period}::timestamptz AND l.period_end > ${f.period}::timestamptz`)}
        ${and(!!f.below, Prisma.sql`AND l.id < ${f.below}`)}) x
    WHERE ${f.status ?? null}::text IS NULL OR x.status = ${f.status ?? null}::text
    ORDER BY x.id DESC LIMIT ${take}`;
}

/** An entry of the brand as a reversal reads it first: its kind and entity. */
export async function entryToReverse(
  tx: Tx,
  scope: BrandScope,
  id: string,
): Promise<{ id: string; kind: string; entity_id: string } | undefined> {
  const where = Prisma.sql`l.organization_id = ${scope.organization.id} AND l.brand_id = ${scope.brand.id}`;
  const [entry] = await tx.$queryRaw<
    { id: string; kind: string; entity_id: string }[]
  >`SELECT l.id, l.kind, l.entity_id FROM ledger_entry l WHERE l.id = ${id} AND ${where}`;
  return entry;
}

/** The reversal of an entry, if it has one. */
export async function reversalOf(tx: Tx, entryId: string): Promise<{ id: string } | undefined> {
  const [done] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM ledger_entry WHERE reverses_id = ${entryId}`;
  return done;
}

/**
 * Appends the compensating entry `id` of entry `reverses`: amount and earned negated, payable in the first period from
 * the entry's on in which nothing of the enrollment is paid or in flight, the enrollment's carry passed on unchanged.
 */
export async function insertReversal(tx: Tx, r: { id: string; reverses: string; reason: string; now: Date }): Promise<void> {
  const now = Prisma.sql`${r.now}::timestamptz`;
  const window = Prisma.sql`p.performance_window`;
  await tx.$executeRaw`
    WITH o AS (
      SELECT l.*, p.performance_window,
             COALESCE(${firstOpenPeriod(Prisma.sql`l.enrollment_id`, Prisma.sql`l.period_start`, window, now)}, ${periodStart(window, now)}) AS payable
        FROM ledger_entry l JOIN program p ON p.id = l.program_id WHERE l.id = ${r.reverses})
    INSERT INTO ledger_entry (id, organization_id, brand_id, program_id, enrollment_id, entity_id, kind, period_start, period_end,
      source_period_start, qualified, tier_id, metric, value, rate_bps, earned, carry, amount, reverses_id, reason, created_at)
    SELECT ${r.id}, o.organization_id, o.brand_id, o.program_id, o.enrollment_id, o.entity_id, 'reversal', o.payable,
           ${periodEnd(Prisma.sql`o.performance_window`, Prisma.sql`o.payable`)}, o.source_period_start, o.qualified, o.tier_id, o.metric,
           -o.value, o.rate_bps, -o.amount,
           COALESCE((SELECT carry FROM ledger_entry c WHERE c.enrollment_id = o.enrollment_id ORDER BY c.created_at DESC, c.id DESC LIMIT 1), 0),
           -o.amount, o.id, ${r.reason}, ${now}
      FROM o`;
}

export async function entryById(tx: Tx, id: string): Promise<EntryRow | undefined> {
  const [row] = await tx.$queryRaw<EntryRow[]>`SELECT ${ENTRY_COLUMNS} FROM ledger_entry l WHERE l.id = ${id}`;
  return row;
}

/** The CSV export's ledger page: entries payable in the period containing `at`, by id from `after`, with their entity's identity. */
export function ledgerExportPage(
  db: Db,
  scope: BrandScope,
  period: Date,
  after: string,
  limit: number,
): Promise<(EntryRow & { external_user_id: string | null; issuer: string | null })[]> {
  const at = Prisma.sql`${period}::timestamptz`;
  return db.$queryRaw<(EntryRow & { external_user_id: string | null; issuer: string | null })[]>`
        SELECT ${ENTRY_COLUMNS}, e.external_user_id, e.issuer FROM ledger_entry l LEFT JOIN entity e ON e.id = l.entity_id
         WHERE l.organization_id = ${scope.organization.id} AND l.brand_id = ${scope.brand.id} AND l.period_start <= ${at} AND l.period_end > ${at} AND l.id > ${after}
         ORDER BY l.id LIMIT ${limit}`;
}

// Payout runs and payouts

export function findRun(db: Db, run: { brandId: string; programId: string | null; periodEnd: Date }): Promise<PayoutRun | null> {
  return db.payoutRun.findFirst({ where: { brandId: run.brandId, programId: run.programId, periodEnd: run.periodEnd } });
}

export async function insertRun(
  tx: Tx,
  run: { id: string; organizationId: string; brandId: string; programId: string | null; periodEnd: Date; operationId: string },
): Promise<void> {
  await tx.payoutRun.create({ data: run });
}

/** The unpaid entries payable in periods ending by `periodEnd` (of a program, or of every program), their total per entity. */
export function unpaidByEntity(
  tx: Tx,
  brandId: string,
  periodEnd: string,
  programId: string | null,
): Promise<{ entity_id: string; amount: string; entries: string[] }[]> {
  return tx.$queryRaw<{ entity_id: string; amount: string; entries: string[] }[]>`
    SELECT l.entity_id, sum(l.amount)::text AS amount, json_agg(l.id ORDER BY l.id) AS entries FROM ledger_entry l
     WHERE l.brand_id = ${brandId} AND l.period_end <= ${periodEnd}::timestamptz
       ${programId ? Prisma.sql`AND l.program_id = ${programId}` : Prisma.empty}
       AND NOT EXISTS (SELECT 1 FROM payout_item i JOIN payout po ON po.id = i.payout_id WHERE i.entry_id = l.id AND po.status IN ${HOLDING})
     GROUP BY l.entity_id HAVING sum(l.amount) > 0 ORDER BY l.entity_id`;
}

/** A run's payouts, created, each linking its entries (`payout_item`). */
export async function insertPayouts(
  tx: Tx,
  run: {
    organizationId: string;
    brandId: string | null;
    programId: string | null;
    runId: string;
    operationId: string;
    periodEnd: string;
    now: Date;
  },
  rows: { id: string; entity_id: string; amount: string; entries: string[] }[],
): Promise<void> {
  const json = JSON.stringify(rows);
  await tx.$executeRaw`
      INSERT INTO payout (id, organization_id, brand_id, program_id, run_id, operation_id, entity_id, amount, status, period_end, created_at, updated_at)
      SELECT r.id, ${run.organizationId}, ${run.brandId}, ${run.programId}, ${run.runId}, ${run.operationId}, r.entity_id, r.amount::bigint, 'created',
             ${run.periodEnd}::timestamptz, ${run.now}::timestamptz, ${run.now}::timestamptz
        FROM json_to_recordset(${json}::json) AS r(id text, entity_id text, amount text)`;
  await tx.$executeRaw`
      INSERT INTO payout_item (payout_id, entry_id)
      SELECT r.id, e.entry FROM json_to_recordset(${json}::json) AS r(id text, entries json), json_array_elements_text(r.entries) AS e(entry)`;
}

/** Moves each payout still in its `from` status to `status` (one conditional statement); the ids moved. */
export async function movePayouts(
  tx: Tx,
  moves: { id: string; from: string; status: string; reason: string | null }[],
  now: Date,
): Promise<string[]> {
  return (
    await tx.$queryRaw<{ id: string }[]>`
        UPDATE payout p SET status = x.status, failure_reason = x.reason, updated_at = ${now}::timestamptz
          FROM json_to_recordset(${JSON.stringify(moves)}::json) AS x(id text, "from" text, status text, reason text)
         WHERE p.id = x.id AND p.status = x."from" RETURNING p.id`
  ).map((r) => r.id);
}

/** A run's payouts in a status, by id (the first `take`, or all). */
export function runPayoutsIn(db: Db, runId: string, status: string, take?: number): Promise<Payout[]> {
  return db.payout.findMany({ where: { runId, status }, orderBy: { id: 'asc' }, take });
}

export function countRunPayouts(tx: Tx, runId: string, status: string): Promise<number> {
  return tx.payout.count({ where: { runId, status } });
}

export function brandPayout(db: Db, scope: BrandScope, id: string): Promise<Payout | null> {
  return db.payout.findFirst({ where: { id, organizationId: scope.organization.id, brandId: scope.brand.id } });
}

export function payoutsPage(
  db: Db,
  scope: BrandScope,
  f: { status?: string; entityId?: string; operationId?: string },
  below: Below,
  take: number,
): Promise<Payout[]> {
  const where: Prisma.PayoutWhereInput = {
    organizationId: scope.organization.id,
    brandId: scope.brand.id,
    ...(f.status ? { status: f.status } : {}),
    ...(f.entityId ? { entityId: f.entityId } : {}),
    ...(f.operationId ? { operationId: f.operationId } : {}),
  };
  return db.payout.findMany({ where: { ...where, ...below }, orderBy: { id: 'desc' }, take });
}

/** The ledger entries the payouts pay, by entry id. */
export function payoutItems(db: Db, payoutIds: string[]): Promise<PayoutItem[]> {
  return db.payoutItem.findMany({ where: { payoutId: { in: payoutIds } }, orderBy: { entryId: 'asc' } });
}

export interface PayoutExportRow {
  id: string;
  entity: string;
  external_user_id: string | null;
  issuer: string | null;
  program: string | null;
  amount: string;
  status: string;
  failure_reason: string | null;
  period_end: Date;
  operation: string;
  entries: number;
  created_at: Date;
  updated_at: Date;
}

/** The CSV export's payouts page: payouts paying entries payable in the period containing `period`, by id from `after`. */
export function payoutsExportPage(db: Db, scope: BrandScope, period: Date, after: string, limit: number): Promise<PayoutExportRow[]> {
  const at = Prisma.sql`${period}::timestamptz`;
  return db.$queryRaw<PayoutExportRow[]>`
        SELECT p.id, p.entity_id AS entity, e.external_user_id, e.issuer, p.program_id AS program, p.amount::text AS amount, p.status,
               p.failure_reason, p.period_end, p.operation_id AS operation,
               (SELECT count(*)::int FROM payout_item i WHERE i.payout_id = p.id) AS entries, p.created_at, p.updated_at
          FROM payout p LEFT JOIN entity e ON e.id = p.entity_id
         WHERE p.organization_id = ${scope.organization.id} AND p.brand_id = ${scope.brand.id} AND p.id > ${after}
           AND EXISTS (SELECT 1 FROM payout_item i JOIN ledger_entry l ON l.id = i.entry_id
                        WHERE i.payout_id = p.id AND l.period_start <= ${at} AND l.period_end > ${at})
         ORDER BY p.id LIMIT ${limit}`;
}
