import { z } from 'zod';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { missing } from '../errors.ts';
import { newId } from '../id.ts';
import { wakeOperations } from '../operation/operation.ts';
import { fingerprint, runIdempotent, validateIdempotencyKey } from '../idempotency/idempotency.ts';
import { parseInput } from '../validation.ts';

/**
 * A brand's wallet and its ledger. Money moves only through these functions,
 * each writing one WalletMovement beside the balance change in the same
 * transaction, so Σ top_up = wallet balance + Σ held by distributions + Σ
 * spent at every commit. Amounts are integer minor units.
 */
export const MAX_AMOUNT = 2_147_483_647;
export const amount = z.number().int('must be an integer amount in minor units').min(0).max(MAX_AMOUNT);

export interface Movement {
  organizationId: string;
  brandId: string;
  distributionId?: string;
  operationId?: string | null;
}

async function record(deps: Deps, tx: Tx, m: Movement, kind: 'top_up' | 'reserve' | 'release' | 'spend', value: number) {
  await tx.walletMovement.create({
    data: {
      id: newId('walletMovement'),
      organizationId: m.organizationId,
      brandId: m.brandId,
      kind,
      amount: value,
      distributionId: m.distributionId ?? null,
      operationId: m.operationId ?? null,
      createdAt: deps.clock.now(),
    },
  });
}

export async function walletBalance(db: Tx | Deps['db']['prisma'], brandId: string): Promise<number> {
  const w = await db.brandWallet.findUnique({ where: { brandId } });
  return Number(w?.balance ?? 0n);
}

/**
 * Moves `value` from the wallet into the distribution's hold when the wallet
 * covers it. The conditional update is the check: two reservations racing
 * for the same money cannot both pass.
 */
export async function reserve(deps: Deps, tx: Tx, m: Movement & { distributionId: string }, value: number): Promise<boolean> {
  const { count } = await tx.brandWallet.updateMany({
    where: { brandId: m.brandId, balance: { gte: value } },
    data: { balance: { decrement: value }, updatedAt: deps.clock.now() },
  });
  if (!count) return false;
  await tx.distribution.update({ where: { id: m.distributionId }, data: { reserved: { increment: value } } });
  await record(deps, tx, m, 'reserve', value);
  return true;
}

/** Moves `value` of the distribution's hold to spent (a provider consumed it). */
export async function spend(deps: Deps, tx: Tx, m: Movement & { distributionId: string }, value: number): Promise<void> {
  if (value <= 0) return;
  await tx.distribution.update({ where: { id: m.distributionId }, data: { reserved: { decrement: value }, spent: { increment: value } } });
  await record(deps, tx, m, 'spend', value);
}

/** Returns everything the distribution still holds to the wallet; the amount released (0 when nothing was held). */
export async function releaseAll(deps: Deps, tx: Tx, m: Movement & { distributionId: string }): Promise<number> {
  const dist = await tx.distribution.findUniqueOrThrow({ where: { id: m.distributionId }, select: { reserved: true } });
  const value = Number(dist.reserved);
  if (value <= 0) return 0;
  await tx.distribution.update({ where: { id: m.distributionId }, data: { reserved: { decrement: value } } });
  await tx.brandWallet.update({ where: { brandId: m.brandId }, data: { balance: { increment: value }, updatedAt: deps.clock.now() } });
  await record(deps, tx, m, 'release', value);
  return value;
}

export const TopUpInput = z.strictObject({ amount: amount.min(1) });

export interface PublicWallet {
  object: 'wallet';
  brand: string;
  balance: number;
  updated_at: string | null;
}

async function brandOf(deps: Deps, brand: string) {
  const row = await deps.db.prisma.brand.findFirst({ where: { id: brand }, select: { id: true, organizationId: true } });
  if (!row) throw missing('brand', brand);
  return row;
}

export async function retrieveWallet(deps: Deps, brand: string): Promise<PublicWallet> {
  const b = await brandOf(deps, brand);
  const w = await deps.db.prisma.brandWallet.findUnique({ where: { brandId: b.id } });
  return { object: 'wallet', brand: b.id, balance: Number(w?.balance ?? 0n), updated_at: w?.updatedAt.toISOString() ?? null };
}

/**
 * Operator top-up. Adds money and wakes the brand's launches that wait on
 * funding in the same transaction, so they retry their reservation at once.
 */
export async function topUpWallet(deps: Deps, brand: string, raw: unknown, idempotencyKey?: string): Promise<PublicWallet> {
  const input = parseInput(TopUpInput, raw);
  const key = validateIdempotencyKey(idempotencyKey);
  const b = await brandOf(deps, brand);
  // Money moves: a retried top-up with the same Idempotency-Key replays instead of crediting twice.
  const out = await runIdempotent(
    deps,
    key ? { namespace: `operator:wallet:${b.id}`, key, fingerprint: fingerprint('wallet.top_up', input) } : undefined,
    async (tx) => {
      const now = deps.clock.now();
      const w = await tx.brandWallet.upsert({
        where: { brandId: b.id },
        create: { brandId: b.id, organizationId: b.organizationId, balance: input.amount, updatedAt: now },
        update: { balance: { increment: input.amount }, updatedAt: now },
      });
      await record(deps, tx, { organizationId: b.organizationId, brandId: b.id }, 'top_up', input.amount);
      await wakeOperations(deps, tx, { brandId: b.id, waitingReason: 'funding_required' });
      const body: PublicWallet = { object: 'wallet', brand: b.id, balance: Number(w.balance), updated_at: w.updatedAt.toISOString() };
      return { status: 200, body };
    },
  );
  return out.body as PublicWallet;
}
