import { expect } from 'vitest';
import { appTest, buildOrg, type TestApp } from '../support/kit.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

test('a retried wallet top-up with the same Idempotency-Key credits once; a different amount with the key is refused', async () => {
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
