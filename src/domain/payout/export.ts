import { z } from 'zod';
import type { Deps } from '../context.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { timestamp } from '../validation.ts';
import { presentEntry } from './ledger.ts';
import { ledgerExportPage, payoutsExportPage } from './store.ts';

/**
 * CSV exports of the payout ledger and of payouts, for the period containing
 * `period` (entries payable in it; payouts paying such entries). Streamed: rows
 * are read PAGE rows at a time by id (a keyset cursor, ascending), each page
 * written before the next is read, so memory stays constant whatever the size
 * and the first bytes leave before the last page is read. RFC 4180: CRLF line
 * ends, a header row, fields with a comma, quote, CR or LF quoted with quotes
 * doubled. CSV injection (OWASP): a text cell starting with = + - @, tab or CR
 * is prefixed with a single quote; numeric columns are numbers we wrote.
 */
export const EXPORT_KINDS = ['payouts', 'ledger'] as const;
const PAGE = 1000;

export const ExportInput = z.strictObject({
  format: z.literal('csv', { error: 'must be csv' }),
  kind: z.enum(EXPORT_KINDS).default('payouts'),
  period: timestamp().describe('any RFC 3339 instant of the period: rows payable in the period containing it'),
});

/** The documented columns of each export, in order (stable: new columns are only ever appended). */
export const EXPORT_COLUMNS = {
  ledger: [
    'id',
    'kind',
    'entity',
    'external_user_id',
    'issuer',
    'program',
    'enrollment',
    'period_start',
    'period_end',
    'source_period_start',
    'tier',
    'metric',
    'value',
    'rate_bps',
    'earned',
    'amount',
    'carry',
    'status',
    'payout',
    'reverses',
    'created_at',
    'reason',
  ],
  payouts: [
    'id',
    'entity',
    'external_user_id',
    'issuer',
    'program',
    'amount',
    'status',
    'failure_reason',
    'period_end',
    'operation',
    'entries',
    'created_at',
    'updated_at',
  ],
} as const;

const NUMERIC = new Set(['value', 'rate_bps', 'earned', 'amount', 'carry', 'entries']);

/** One CSV cell: injection-safe for text, RFC 4180-quoted when needed. */
export function csvCell(value: unknown, numeric = false): string {
  if (value === null || value === undefined) return '';
  let s = String(value);
  if (!numeric && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

const line = (kind: keyof typeof EXPORT_COLUMNS, row: Record<string, unknown>) =>
  `${EXPORT_COLUMNS[kind].map((c) => csvCell(row[c], NUMERIC.has(c))).join(',')}\r\n`;

/** The export's lines, header first, page by page (nothing is read before the consumer asks for the next line). */
export async function* exportCsv(deps: Deps, caller: SurfaceBCaller, input: z.output<typeof ExportInput>): AsyncGenerator<string> {
  const db = deps.db.prisma;
  yield `${EXPORT_COLUMNS[input.kind].join(',')}\r\n`;
  let after = '';
  for (;;) {
    if (input.kind === 'ledger') {
      const rows = await ledgerExportPage(db, caller, input.period, after, PAGE);
      let chunk = '';
      for (const r of rows) chunk += line('ledger', { ...presentEntry(r), external_user_id: r.external_user_id, issuer: r.issuer });
      if (chunk) yield chunk;
      if (rows.length < PAGE) return;
      after = rows.at(-1)!.id;
    } else {
      const rows = await payoutsExportPage(db, caller, input.period, after, PAGE);
      let chunk = '';
      for (const r of rows) {
        const iso = (d: unknown) => new Date(d as Date).toISOString();
        chunk += line('payouts', { ...r, period_end: iso(r.period_end), created_at: iso(r.created_at), updated_at: iso(r.updated_at) });
      }
      if (chunk) yield chunk;
      if (rows.length < PAGE) return;
      after = rows.at(-1)!.id;
    }
  }
}
