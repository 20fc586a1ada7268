import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { buildOrg } from '../support/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.stop());

it('a retried wallet top-up with the same Idempotency-Key credits once; a different amount with the key is refused', async () => {
  const org = await buildOrg(t);
  const brand = org.brands[0]!.id;
  const topUp = (amount: number, key?: string) =>
    t.http.post(
      `/operator/brands/${brand}/wallet/top_up`,
      { amount },
      { token: t.operatorToken, headers: key ? { 'idempotency-key': key } : {} },
    );

  const first = await topUp(500, 'topup-1');
  expect(first.status).toBe(200);
  expect(first.body.balance).toBe(500);
  const replays = await Promise.all([topUp(500, 'topup-1'), topUp(500, 'topup-1'), topUp(500, 'topup-1')]);
  for (const r of replays) expect(r.body).toEqual(first.body);
  expect((await t.http.get(`/operator/brands/${brand}/wallet`, { token: t.operatorToken })).body.balance).toBe(500);

  const conflict = await topUp(700, 'topup-1');
  expect(conflict.status).toBe(409);
  expect(conflict.body.error).toBe('idempotency_key_conflict');

  expect((await topUp(100)).body.balance).toBe(600); // no key: every call credits
  expect((await topUp(100)).body.balance).toBe(700);
});
