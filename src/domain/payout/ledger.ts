import { z } from 'zod';
import { lockBrand } from '../brand/store.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { capability, mutation, read, type Reader } from '../action/action.ts';
import { findEntity, lockEntity } from '../entity/entity.ts';
import { ListInput, listOf, pageOf } from '../action/list.ts';
import { findProgram } from '../program/program.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { timestamp } from '../validation.ts';
import { isoTime } from '../shape.ts';
import {
  brandEntry,
  brandEntryId,
  dueAccruals,
  dueEnrollments,
  type EnrollmentRef,
  type EntryKind,
  type EntryRow,
  type EntryStatus,
  entryById,
  entryToReverse,
  insertAccrual,
  insertReversal,
  lateAccruals,
  ledgerPage,
  ledgerTotals,
  markAccrued,
  periodEndOf,
  reversalOf,
} from './store.ts';

/** Also read by the due-evaluation loop (src/domain/enrollment/due-evaluation.ts). */

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
export const ENTRY_KINDS = ['accrual', 'adjustment', 'reversal'] as const satisfies readonly EntryKind[];
export const ENTRY_STATUSES = ['unpaid', 'in_flight', 'paid'] as const satisfies readonly EntryStatus[];

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

/**
 * Accrues every closed period not yet accrued of the entity's active enrollments in laddered programs, one entry
 * per period (the caller holds the entity's lock), and moves `accrued_until` to the current period's start.
 * Standing is read as it is now: accrual runs at the period boundary, before anything evaluates the new period.
 */
export async function accrueEntity(deps: Deps, tx: Tx, entityId: string): Promise<number> {
  const now = deps.clock.now();
  const due = await dueEnrollments(tx, entityId, now);
  let written = 0;
  for (const e of due) {
    for (const period of e.periods ?? []) {
      const start = new Date(period.start);
      written += await accruePeriod(deps, tx, e, start, new Date(period.end), { start, end: new Date(period.end) });
    }
    await markAccrued(tx, e.id, now);
  }
  return written;
}

/** Appends what (enrollment, source period) earns beyond what its entries already earned (store.ts `insertAccrual`). */
const accruePeriod = (deps: Deps, tx: Tx, e: EnrollmentRef, start: Date, end: Date, payable: { start: Date; end: Date }) =>
  insertAccrual(tx, e, { id: newId('ledgerEntry'), start, end, payable, now: deps.clock.now() });

/**
 * After a measurement batch (the caller holds the entities' locks, in id order): first the closed periods not yet
 * accrued, then an adjustment for every accrued period a new measurement falls in, payable in the first period
 * from it on in which nothing of the enrollment is paid or in flight.
 */
export async function accrueMeasured(deps: Deps, tx: Tx, entityIds: string[], measurementIds: string[]): Promise<void> {
  if (!entityIds.length) return;
  for (const id of await dueAccruals(tx, deps.clock.now(), entityIds.length, entityIds)) await accrueEntity(deps, tx, id);
  for (const l of await lateAccruals(tx, measurementIds, deps.clock.now())) {
    const end = await periodEndOf(tx, l.program_id, l.payable_start);
    await accruePeriod(deps, tx, l, new Date(l.start), new Date(l.end), { start: new Date(l.payable_start), end: new Date(end) });
  }
}

/**
 * The ledger invariant as one SQL check: Σ ledger = settled payouts + payouts in flight + unpaid entries, every
 * payout's amount is the sum of its entries, and no entry is held by two live or settled payouts. In flight: created
 * payouts and those the provider holds for review. Suites call it
 * after payout runs (and after crash recovery); `ok` is the conjunction.
 */
export async function ledgerInvariant(db: Reader, organizationId?: string) {
  const r = await ledgerTotals(db, organizationId);
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
  const row = isId('ledgerEntry', id) ? await brandEntry(deps.db.prisma, caller, id) : undefined;
  if (!row) throw missing('ledger entry', id);
  return presentEntry(row);
}

async function findEntry(db: Reader, caller: SurfaceBCaller, id: string, param: string) {
  const row = isId('ledgerEntry', id) ? await brandEntryId(db, caller, id) : null;
  if (!row) throw missing('ledger entry', id, param);
  return row;
}

/** The selected brand's entries, newest first, filtered by entity, program, period and status. */
async function listLedger(db: Reader, caller: SurfaceBCaller, input: z.output<typeof LedgerInput>) {
  if (input.program !== undefined) await findProgram(db, caller, input.program, 'program');
  if (input.entity !== undefined) await findEntity(db, caller.organization.id, { kind: 'entity', id: input.entity });
  const cursor = input.starting_after === undefined ? undefined : await findEntry(db, caller, input.starting_after, 'starting_after');
  const rows = await ledgerPage(
    db,
    caller,
    { entity: input.entity, program: input.program, period: input.period, status: input.status, below: cursor?.id },
    input.limit + 1,
  );
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
  const entry = isId('ledgerEntry', id) ? await entryToReverse(tx, caller, id) : undefined;
  if (!entry) throw missing('ledger entry', id);
  if (entry.kind === 'reversal')
    throw new DomainError('resource_conflict', `The ledger entry ${id} is a reversal: a reversal is final and cannot be reversed`, null);
  await lockBrand(tx, caller.brand.id);
  await lockEntity(tx, entry.entity_id);
  const done = await reversalOf(tx, id);
  if (done) throw new DomainError('resource_conflict', `The ledger entry ${id} is already reversed by ${done.id}`, null);
  const reversal = newId('ledgerEntry');
  await insertReversal(tx, { id: reversal, reverses: id, reason: input.reason, now: deps.clock.now() });
  const row = await entryById(tx, reversal);
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
