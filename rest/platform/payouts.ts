import type { Deps } from '../../src/domain/context.ts';
import { ledger } from '../../src/domain/payout/ledger.ts';
import { payouts } from '../../src/domain/payout/payout.ts';
import { Readable } from 'node:stream';
import { z } from 'zod';
import { missingScope } from '../../src/domain/errors.ts';
import { EXPORT_COLUMNS, ExportInput, exportCsv } from '../../src/domain/payout/export.ts';
import type { SurfaceBCaller } from '../../src/domain/platform/request-auth.ts';
import { parseInput } from '../../src/domain/validation.ts';
import type { RouteDef } from '../http/route.ts';
import { platformQuery } from './pipeline.ts';
import { actionRoute } from './answer.ts';

/** Payouts: the ledger, runs (operations), payouts; the selected brand's. */
export function payoutRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Payouts', errors: [400, 401, 403, 404, 409, 429, 503] };
  return [
    {
      method: 'GET',
      path: '/payouts/exports',
      operationId: 'exportPayouts',
      summary: `CSV of the payouts (kind=payouts, columns ${EXPORT_COLUMNS.payouts.join(', ')}) or the ledger (kind=ledger, columns ${EXPORT_COLUMNS.ledger.join(', ')}) for the period containing \`period\`, streamed`,
      tag: 'Payouts',
      auth: 'platform',
      scope: 'payouts:read',
      query: ExportInput,
      success: {
        status: 200,
        description: 'RFC 4180 CSV (CRLF, header row); text cells starting with = + - @ are prefixed with a single quote',
        schema: z.string(),
        contentType: 'text/csv',
      },
      errors: common.errors,
      handler: async (ctx) => {
        const caller = ctx.state.caller as SurfaceBCaller;
        if (!caller.scopes.has('payouts:read')) throw missingScope('payouts:read');
        // Everything that can be refused is refused before the first byte: the stream itself only reads.
        const input = parseInput(ExportInput, platformQuery(ctx));
        ctx.set('Content-Disposition', `attachment; filename="${input.kind}-${input.period.toISOString().slice(0, 10)}.csv"`);
        ctx.type = 'text/csv; charset=utf-8';
        ctx.body = Readable.from(exportCsv(deps, caller, input));
      },
    },
    actionRoute(deps, ledger.list, {
      ...common,
      method: 'GET',
      path: '/payouts/ledger',
      operationId: 'listLedgerEntries',
      summary: 'Ledger entries of the selected brand, newest first: what each enrollment earned per period, in integer minor units',
      description: 'A page of ledger entries',
    }),
    actionRoute(deps, ledger.reverse, {
      ...common,
      method: 'POST',
      path: '/payouts/ledger/:id/reverse',
      operationId: 'reverseLedgerEntry',
      summary:
        'Reverse a ledger entry by a compensating entry (negative amount, reverses = the entry): an unpaid entry nets out of the next run, a paid one is clawed back from the next payout; an entry is reversed once, a reversal is final (409)',
      description: 'The wrapped compensating entry',
      envelope: 'ledger_entry',
    }),
    actionRoute(deps, payouts.run, {
      ...common,
      method: 'POST',
      path: '/payouts/runs',
      operationId: 'runPayouts',
      summary:
        'Pay the unpaid entries payable by period_end, one payout per entity, as a payout.run operation (one per brand, program and period_end: a repeat answers the same operation)',
      description: 'The wrapped payout.run operation',
      envelope: 'operation',
    }),
    actionRoute(deps, payouts.cancelRun, {
      ...common,
      method: 'POST',
      path: '/payouts/runs/:id/cancel',
      operationId: 'cancelPayoutRun',
      summary: 'Cancel a live payout run (control plane): settled payouts stay paid, the rest fail and their holds return to the wallet',
      description: 'The wrapped payout.run_cancel operation',
      envelope: 'operation',
    }),
    actionRoute(deps, payouts.list, {
      ...common,
      method: 'GET',
      path: '/payouts',
      operationId: 'listPayouts',
      summary: 'Payouts of the selected brand, newest first',
      description: 'A page of payouts',
    }),
    actionRoute(deps, payouts.retrieve, {
      ...common,
      method: 'GET',
      path: '/payouts/:id',
      operationId: 'retrievePayout',
      summary: 'One payout, with the ledger entries it pays',
      description: 'The payout',
    }),
  ];
}
