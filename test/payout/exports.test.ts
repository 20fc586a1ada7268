import { describe, expect } from 'vitest';
import { newId } from '../../src/domain/id.ts';
import { appTest, expectPlatformError, type TestApp } from '../support/kit.ts';
import { payoutTenant } from './helpers.ts';
import { insertLedgerEntry, seedLedger } from '../support/db-access.ts';

const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => {
  t = app;
});

const DAY = 86_400_000;
type Who = Awaited<ReturnType<typeof payoutTenant>>;

const seed = (who: Who, n: number, start: Date, user?: string) => seedLedger(t.app.deps.db.prisma, who.org.id, who.brand, n, start, user);

const get = (who: Who, q: string) => t.http.get(`/v1/platform/payouts/exports?${q}`, { token: who.token });

describe('exports', () => {
  test('the ledger as RFC 4180 CSV: stable columns, quoting, CSV-injection safe cells', async () => {
    const who = await payoutTenant(t);
    const start = new Date(Math.floor(t.clock.now().getTime() / DAY) * DAY - DAY);
    await seed(who, 2, start, '=HYPERLINK("http://evil.example","x")');
    await seed(who, 1, start, 'plain, with "quotes"');
    const res = await get(who, `format=csv&kind=ledger&period=${start.toISOString()}`);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="ledger-${start.toISOString().slice(0, 10)}.csv"`);
    const lines = res.text.split('\r\n');
    expect(lines.at(-1)).toBe('');
    expect(lines[0]).toBe(
      'id,kind,entity,external_user_id,issuer,program,enrollment,period_start,period_end,source_period_start,tier,metric,value,rate_bps,earned,amount,carry,status,payout,reverses,created_at,reason',
    );
    expect(lines).toHaveLength(1 + 3 + 1);
    expect(lines.filter((l) => l.includes(`"'=HYPERLINK(""http://evil.example"",""x"")"`))).toHaveLength(2);
    expect(lines.filter((l) => l.includes('"plain, with ""quotes"""'))).toHaveLength(1);
    expect(lines[1]).toMatch(/,accrual,ent_[0-9a-f]{32},/);
    expect(lines[1]).toContain(',70,1000,7,7,0,unpaid,,,');
    // Another period: the header only; payouts of the period: none yet.
    expect((await get(who, `format=csv&kind=ledger&period=${t.clock.now().toISOString()}`)).text.split('\r\n')).toHaveLength(2);
    const payouts = await get(who, `format=csv&period=${start.toISOString()}`);
    expect(payouts.text).toBe(
      'id,entity,external_user_id,issuer,program,amount,status,failure_reason,period_end,operation,entries,created_at,updated_at\r\n',
    );
  });

  test('bad format, kind or period is 400 naming it; the scope is payouts:read', async () => {
    const who = await payoutTenant(t);
    const now = t.clock.now().toISOString();
    expectPlatformError(await get(who, `format=xml&period=${now}`), 400, 'invalid_request', 'format');
    expectPlatformError(await get(who, `period=${now}`), 400, 'invalid_request', 'format');
    expectPlatformError(await get(who, `format=csv&kind=both&period=${now}`), 400, 'invalid_request', 'kind');
    expectPlatformError(await get(who, 'format=csv'), 400, 'invalid_request', 'period');
    expectPlatformError(await get(who, 'format=csv&period=last-month'), 400, 'invalid_request', 'period');
    expectPlatformError(await get(who, `format=csv&period=${now}&extra=1`), 400, 'invalid_request', 'extra');
    const reader = await payoutTenant(t, ['events:read']);
    expectPlatformError(await get(reader, `format=csv&period=${now}`), 403, 'missing_scope');
  });

  test('100k rows stream from the cursor: a row written after the first bytes arrived is in the export', { timeout: 240_000 }, async () => {
    const who = await payoutTenant(t);
    const start = new Date(Math.floor(t.clock.now().getTime() / DAY) * DAY - DAY);
    const entity = await seed(who, 100_000, start);
    const res = await fetch(`${t.origin}/v1/platform/payouts/exports?format=csv&kind=ledger&period=${start.toISOString()}`, {
      headers: { authorization: `Bearer ${who.token}` },
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const first = await reader.read();
    let text = decoder.decode(first.value, { stream: true });
    // The export has read at most a few pages by now (the rest waits on this reader): a row added now, with the
    // highest id, is read by a later page. A buffered answer would have been complete before the first byte.
    const marker = newId('ledgerEntry');
    await insertLedgerEntry(t, {
      id: marker,
      organizationId: who.org.id,
      brandId: who.brand,
      programId: 'prog_seed',
      enrollmentId: 'enr_marker',
      entityId: entity,
      periodStart: start,
      periodEnd: new Date(start.getTime() + DAY),
      value: 1,
      rateBps: 1,
      earned: 0.0001,
      carry: 0.0001,
      amount: 0,
    });
    let lines = 0;
    let sawMarker = false;
    const take = () => {
      const cut = text.lastIndexOf('\r\n') + 2;
      const complete = text.slice(0, cut);
      lines += complete.split('\r\n').length - 1;
      sawMarker ||= complete.includes(marker);
      text = text.slice(cut);
    };
    take();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      take();
    }
    expect(text).toBe('');
    expect(lines).toBe(1 + 100_000 + 1);
    // Streamed, not buffered: the row written after the first bytes left is in the answer. (Constant memory is proven
    // in a process of its own, with a forced GC: test/payout/export-memory.test.ts.)
    expect(sawMarker).toBe(true);
  });
});
