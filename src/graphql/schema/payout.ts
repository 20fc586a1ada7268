import { LedgerEntry as LedgerEntryShape, ledger } from '../../domain/payout/ledger.ts';
import { payouts } from '../../domain/payout/payout.ts';
import { PayoutObject } from '../../domain/payout/presenter.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { objectType } from '../derive.ts';
import { Node } from './node.ts';
import { Operation } from './operation.ts';

/** Payouts in GraphQL: the same actions as REST (the ledger, runs, payouts). */

const LedgerEntry = objectType('LedgerEntry', LedgerEntryShape, {
  description: 'What an enrollment earned for a period, in integer minor units (le_); never updated or deleted',
  interfaces: [Node],
});

const Payout = objectType('Payout', PayoutObject, {
  description: 'One payment to an entity from a payout run (po_)',
  interfaces: [Node],
});

connectionAction('ledgerEntries', ledger.list, {
  type: LedgerEntry,
  description: 'The payout ledger of the selected brand, newest first (scope payouts:read). Cursors are le_ ids.',
  ids: ['entity', 'program'],
});

connectionAction('payouts', payouts.list, {
  type: Payout,
  description: 'Payouts of the selected brand, newest first (scope payouts:read). Cursors are po_ ids.',
  ids: ['entity', 'operation'],
});

queryAction('payout', payouts.retrieve, {
  description: 'One payout by po_ id, with the entries it pays (scope payouts:read)',
  type: Payout,
});

mutationAction('reverseLedgerEntry', ledger.reverse, {
  description:
    'Reverse a ledger entry by a compensating entry (negative amount); an entry is reversed once, a reversal is final (scope payouts:write)',
  type: LedgerEntry,
});

mutationAction('runPayouts', payouts.run, {
  description:
    'Pay the unpaid entries payable by periodEnd, one payout per entity; returns the payout.run operation (one per brand, program and periodEnd) (scope payouts:write)',
  type: Operation,
  ids: ['program'],
});

mutationAction('cancelPayoutRun', payouts.cancelRun, {
  description: 'Cancel a live payout run by its operation id; returns the payout.run_cancel operation (scope payouts:write)',
  type: Operation,
});
