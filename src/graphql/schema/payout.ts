import { ledger, type PublicLedgerEntry } from '../../domain/payout/ledger.ts';
import { payouts, type PublicPayout } from '../../domain/payout/payout.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { given } from '../connection.ts';
import { LedgerEntryKind, LedgerEntryStatus, PayoutStatus } from './enums.ts';
import { Node } from './node.ts';
import { Operation } from './operation.ts';

/** Payouts in GraphQL: the same actions as REST (the ledger, runs, payouts). */

const LedgerEntry = builder.objectRef<PublicLedgerEntry>('LedgerEntry').implement({
  description: 'What an enrollment earned for a period, in integer minor units (le_); never updated or deleted',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    kind: t.field({ type: LedgerEntryKind, resolve: (e) => e.kind }),
    entity: t.exposeString('entity'),
    program: t.exposeString('program'),
    enrollment: t.exposeString('enrollment'),
    periodStart: t.exposeString('period_start', { description: 'the period it is payable in' }),
    periodEnd: t.exposeString('period_end', { description: 'exclusive' }),
    sourcePeriodStart: t.exposeString('source_period_start', { description: 'the period whose performance earned it' }),
    tier: t.exposeString('tier', { nullable: true }),
    metric: t.exposeString('metric', { nullable: true }),
    value: t.exposeFloat('value'),
    rateBps: t.exposeInt('rate_bps'),
    earned: t.exposeString('earned', { description: 'the exact amount earned, a decimal in minor units' }),
    amount: t.exposeInt('amount', { description: 'integer minor units: earned plus the carried remainder, rounded down' }),
    carry: t.exposeString('carry', { description: "the remainder carried to the enrollment's next entry" }),
    status: t.field({ type: LedgerEntryStatus, resolve: (e) => e.status }),
    payout: t.exposeString('payout', { nullable: true }),
    reverses: t.exposeString('reverses', { nullable: true, description: 'on a reversal: the entry it compensates' }),
    reason: t.exposeString('reason', { nullable: true, description: 'on a reversal: why it was made' }),
    createdAt: t.exposeString('created_at'),
  }),
});

const Payout = builder.objectRef<PublicPayout>('Payout').implement({
  description: 'One payment to an entity from a payout run (po_)',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    amount: t.exposeInt('amount', { description: 'integer minor units' }),
    entity: t.exposeString('entity'),
    program: t.exposeString('program', { nullable: true }),
    status: t.field({ type: PayoutStatus, resolve: (p) => p.status }),
    failureReason: t.exposeString('failure_reason', { nullable: true }),
    periodEnd: t.exposeString('period_end'),
    entries: t.exposeStringList('entries', { description: 'the ledger entries (le_) it pays' }),
    operation: t.exposeString('operation', { description: 'the payout.run operation' }),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

connectionAction('ledgerEntries', ledger.list, {
  type: LedgerEntry,
  description: 'The payout ledger of the selected brand, newest first (scope payouts:read). Cursors are le_ ids.',
  args: (arg) => ({
    entity: arg.id(),
    program: arg.id(),
    period: arg.string({ description: 'any RFC 3339 instant of a period: entries payable in it' }),
    status: arg({ type: LedgerEntryStatus }),
  }),
  input: (a) => ({
    input: given({
      entity: a.entity == null ? undefined : String(a.entity),
      program: a.program == null ? undefined : String(a.program),
      period: a.period ?? undefined,
      status: a.status ?? undefined,
    }),
  }),
});

connectionAction('payouts', payouts.list, {
  type: Payout,
  description: 'Payouts of the selected brand, newest first (scope payouts:read). Cursors are po_ ids.',
  args: (arg) => ({ status: arg({ type: PayoutStatus }), entity: arg.id(), operation: arg.id() }),
  input: (a) => ({
    input: given({
      status: a.status ?? undefined,
      entity: a.entity == null ? undefined : String(a.entity),
      operation: a.operation == null ? undefined : String(a.operation),
    }),
  }),
});

queryAction('payout', payouts.retrieve, {
  description: 'One payout by po_ id, with the entries it pays (scope payouts:read)',
  type: Payout,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
});

mutationAction('reverseLedgerEntry', ledger.reverse, {
  description:
    'Reverse a ledger entry by a compensating entry (negative amount); an entry is reversed once, a reversal is final (scope payouts:write)',
  type: LedgerEntry,
  args: (arg) => ({ id: arg.id({ required: true }), reason: arg.string({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) }, input: { reason: a.reason } }),
});

mutationAction('runPayouts', payouts.run, {
  description:
    'Pay the unpaid entries payable by periodEnd, one payout per entity; returns the payout.run operation (one per brand, program and periodEnd) (scope payouts:write)',
  type: Operation,
  args: (arg) => ({ program: arg.id(), periodEnd: arg.string({ required: true }) }),
  input: (a) => ({ input: given({ program: a.program == null ? undefined : String(a.program), period_end: a.periodEnd }) }),
});

mutationAction('cancelPayoutRun', payouts.cancelRun, {
  description: 'Cancel a live payout run by its operation id; returns the payout.run_cancel operation (scope payouts:write)',
  type: Operation,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) }, input: {} }),
});
