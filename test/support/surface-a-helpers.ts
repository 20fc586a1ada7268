import { expect } from 'vitest';
import type { TestApp } from './app.ts';

/** Surface A helpers (its rows straight from the database: unitCount and auditRows in db-access.ts). */
/** Every unit of the organization behind `token` (pages through /api/units/list). */
export async function allUnits(t: TestApp, token: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const res = await t.http.post('/api/units/list', { page, per_page: 100 }, { token });
    expect(res.status, res.text).toBe(200);
    out.push(...res.body.units);
    if (!res.body.has_more) return out;
  }
}

export async function createUnit(
  t: TestApp,
  token: string,
  body: Record<string, unknown> = { type: 'video', caption: 'hello' },
  headers: Record<string, string> = {},
) {
  const res = await t.http.post('/api/units/create', body, { token, headers });
  expect(res.status, res.text).toBe(200);
  return res.body.unit;
}
