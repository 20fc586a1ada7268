import * as generated from '../generated/resources.ts';
import type { RequestOptions, RequestSpec } from '../request-sender.ts';

/** The CSV export's query: not an action of the registry (it answers text, not JSON), so written here. */
export interface PayoutExportParams {
  kind?: 'payouts' | 'ledger';
  /** Any instant of the period. */
  period: string | Date;
}

const exportSpec = (params: PayoutExportParams, options?: RequestOptions): RequestSpec => ({
  method: 'GET',
  path: '/payouts/exports',
  query: { format: 'csv', kind: params.kind, period: params.period },
  options,
});

/** Payouts: the ledger, runs (`payout.run` operations: `operations.wait` them), payouts and CSV exports. */
export class Payouts extends generated.Payouts {
  /** The CSV text (RFC 4180, header row first). */
  export(params: PayoutExportParams, options?: RequestOptions): Promise<string> {
    return this.one(exportSpec(params, options));
  }

  /** The same CSV as a byte stream, read as it arrives (constant memory whatever the size of the export). */
  exportStream(params: PayoutExportParams, options?: RequestOptions): Promise<ReadableStream<Uint8Array>> {
    return this.sender.stream(exportSpec(params, options));
  }
}
