import { Readable } from 'node:stream';
import { z } from 'zod';
import type { Deps } from '../../src/domain/context.ts';
import { missingScope } from '../../src/domain/errors.ts';
import { EXPORT_COLUMNS, ExportInput, exportCsv } from '../../src/domain/payout/export.ts';
import type { SurfaceBCaller } from '../../src/domain/platform/request-auth.ts';
import { parseInput } from '../../src/domain/validation.ts';
import type { RouteDef } from '../http/route.ts';
import { platformQuery } from './pipeline.ts';

/** The payouts CSV export: a stream, not an action's value (rest/outside-seam.ts). */
export function payoutExportRoute(deps: Deps): RouteDef {
  return {
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
    errors: [400, 401, 403, 404, 409, 429, 503],
    handler: async (ctx) => {
      const caller = ctx.state.caller as SurfaceBCaller;
      if (!caller.scopes.has('payouts:read')) throw missingScope('payouts:read');
      // Everything that can be refused is refused before the first byte: the stream itself only reads.
      const input = parseInput(ExportInput, platformQuery(ctx));
      ctx.set('Content-Disposition', `attachment; filename="${input.kind}-${input.period.toISOString().slice(0, 10)}.csv"`);
      ctx.type = 'text/csv; charset=utf-8';
      ctx.body = Readable.from(exportCsv(deps, caller, input));
    },
  };
}
