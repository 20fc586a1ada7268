import type { PagePromise } from '../list.ts';
import type { RequestOptions, RequestSpec } from '../request-sender.ts';
import { Resource, path } from './resource.ts';
import type { LedgerEntry, LedgerEntryStatus, Operation, Payout, PayoutStatus } from './types.ts';

export interface LedgerParams {
  entity?: string;
  program?: string;
  /** Any instant of a period: entries payable in it. */
  period?: string | Date;
  status?: LedgerEntryStatus;
  limit?: number;
  startingAfter?: string;
}

export interface PayoutListParams {
  status?: PayoutStatus;
  entity?: string;
  /** The payout.run operation. */
  operation?: string;
  limit?: number;
  startingAfter?: string;
}

export interface PayoutRunParams {
  /** Omitted: every program of the brand. */
  program?: string;
  /** Pays entries payable in periods ending at or before it; now or past. */
  periodEnd: string | Date;
}

export interface PayoutExportParams {
  kind?: 'payouts' | 'ledger';
  /** Any instant of the period. */
  period: string | Date;
}

const iso = (d: string | Date | undefined) => (d instanceof Date ? d.toISOString() : d);

const exportSpec = (params: PayoutExportParams, options?: RequestOptions): RequestSpec => ({
  method: 'GET',
  path: '/payouts/exports',
  query: { format: 'csv', kind: params.kind, period: iso(params.period) },
  options,
});

/** Payouts: the ledger, runs (`payout.run` operations: `operations.wait` them), payouts and CSV exports. */
export class Payouts extends Resource {
  ledger(params: LedgerParams = {}, options?: RequestOptions): PagePromise<LedgerEntry> {
    return this.page('/payouts/ledger', { ...params, period: iso(params.period) }, options);
  }

  /** Reverses a ledger entry by a compensating one (negative amount); resolves with it. An entry is reversed once (409). */
  reverse(entryId: string, params: { reason: string }, options?: RequestOptions): Promise<LedgerEntry> {
    return this.one(
      { method: 'POST', path: path('/payouts/ledger/{id}/reverse', entryId), body: { reason: params.reason }, idempotent: true, options },
      'ledgerEntry',
    );
  }

  list(params: PayoutListParams = {}, options?: RequestOptions): PagePromise<Payout> {
    return this.page('/payouts', { ...params }, options);
  }

  retrieve(id: string, options?: RequestOptions): Promise<Payout> {
    return this.one({ method: 'GET', path: path('/payouts/{id}', id), options });
  }

  /** Starts (or, for the same program and periodEnd, answers again) the run; resolves with its operation. */
  run(params: PayoutRunParams, options?: RequestOptions): Promise<Operation> {
    const body = { program: params.program, periodEnd: iso(params.periodEnd) };
    return this.one({ method: 'POST', path: '/payouts/runs', body, idempotent: true, options }, 'operation');
  }

  /** The CSV text (RFC 4180, header row first). */
  export(params: PayoutExportParams, options?: RequestOptions): Promise<string> {
    return this.one(exportSpec(params, options));
  }

  /** The same CSV as a byte stream, read as it arrives (constant memory whatever the size of the export). */
  exportStream(params: PayoutExportParams, options?: RequestOptions): Promise<ReadableStream<Uint8Array>> {
    return this.sender.stream(exportSpec(params, options));
  }
}
