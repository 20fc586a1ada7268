import { describe, expect } from 'vitest';
import { appTest, type TestApp } from '../support/kit.ts';
import { drain, events, launch, operationsConfig, sandbox, tenant, topUp, verb } from './helpers.ts';
import { findWallet } from '../../src/domain/wallet/store.ts';
import { distributionsOf, walletMovementsOf } from '../support/db-access.ts';

const test = appTest({ config: operationsConfig() });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

/** Σ of every movement of a brand by kind, and what the wallet and the distributions hold. */
async function ledger(brand: string) {
  const sum: Record<string, number> = { top_up: 0, reserve: 0, release: 0, spend: 0 };
  for (const m of await walletMovementsOf(t, brand)) {
    expect(Number.isInteger(Number(m.amount))).toBe(true);
    expect(Number(m.amount)).toBeGreaterThan(0);
    sum[m.kind] = (sum[m.kind] ?? 0) + Number(m.amount);
  }
  const wallet = Number((await findWallet(t.app.deps.db.prisma, brand))?.balance ?? 0n);
  const dists = await distributionsOf(t, brand);
  const held = dists.reduce((s, d) => s + Number(d.reserved), 0);
  const spent = dists.reduce((s, d) => s + Number(d.spent), 0);
  return { sum, wallet, held, spent };
}

describe('money conservation', () => {
  test('across success, partial, failure, completion, funding waits and cancels, no money is created or lost', async () => {
    const who = await tenant(t);
    await topUp(t, who.brand, 10_000);
    const ok = await launch(t, who, { budget: 3000, deployments: [sandbox({ spend: 1000 }), sandbox({ spend: 500 })] });
    const partial = await launch(t, who, { budget: 2000, deployments: [sandbox({ spend: 700 }), sandbox({ outcome: 'fail' })] });
    const failed = await launch(t, who, { budget: 1000, deployments: [sandbox({ outcome: 'fail' })] });
    const completed = await launch(t, who, { budget: 1500, deployments: [sandbox({ spend: 400, complete: true })] });
    await drain(t);
    const starving = await launch(t, who, { budget: 99_999, deployments: [sandbox()] });
    await drain(t);
    await verb(t, who, ok.distribution.id, 'cancel');
    await verb(t, who, starving.distribution.id, 'cancel');
    await drain(t);
    void partial;
    void failed;
    void completed;

    const { sum, wallet, held, spent } = await ledger(who.brand);
    // The wallet is exactly its movements; every unit reserved is held, spent or released.
    expect(wallet).toBe(sum.top_up! - sum.reserve! + sum.release!);
    expect(held).toBe(sum.reserve! - sum.release! - sum.spend!);
    expect(spent).toBe(sum.spend);
    expect(wallet + held + spent).toBe(sum.top_up);
    expect(sum.top_up).toBe(10_000);
    // The expected figures: ok (1500 spent, the rest released on cancel), partial (700 spent, 1300 held), failed (all back), completed (400 spent, 1100 back).
    expect({ spent, held, wallet }).toEqual({ spent: 2600, held: 1300, wallet: 6100 });
    // The events say the same as the ledger.
    const evts = await events(t, who);
    const total = (type: string) => evts.filter((e) => e.type === type).reduce((s, e) => s + e.data.amount, 0);
    expect(total('budget.reserved')).toBe(sum.reserve);
    expect(total('budget.released')).toBe(sum.release);
  });

  test('validate is a dry run: nothing is created, no money moves', async () => {
    const who = await tenant(t);
    await topUp(t, who.brand, 50);
    const before = await ledger(who.brand);
    const res = await t.http.post(
      '/v1/platform/distributions/validate',
      { name: 'dry', budget: 80, deployments: [sandbox({ spend: 10 })] },
      { token: who.token },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      object: 'distribution_validation',
      valid: true,
      brand: who.brand,
      budget: 80,
      planned_spend: 10,
      deployments: 1,
      wallet_balance: 50,
      funding_sufficient: false,
    });
    expect(await ledger(who.brand)).toEqual(before);
    expect((await t.http.get('/v1/platform/distributions', { token: who.token })).body.data).toEqual([]);
    expect((await t.http.get('/v1/platform/operations', { token: who.token })).body.data).toEqual([]);
  });
});
