import { z } from 'zod';
import { execute, type Prisma, type Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError } from '../errors.ts';
import { newId } from '../id.ts';
import { wakeOperations } from '../operation/operation.ts';
import { fingerprint, runIdempotentValue, validateIdempotencyKey } from '../idempotency/idempotency.ts';
import { parseInput } from '../validation.ts';
import { brandByRef } from '../brand/store.ts';
import { distributionReserved, releaseHoldStatement, reserveHoldStatement, spendHoldStatement } from '../distribution/store.ts';
import {
  creditWalletStatement,
  debitWalletStatement,
  findWallet,
  insertMovement,
  insertMovementStatement,
  type MovementKind,
  type NewMovement,
  addToWallet,
} from './store.ts';

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

const movement = (deps: Deps, m: Movement, kind: MovementKind, value: number): NewMovement => ({
  id: newId('walletMovement'),
  ...m,
  kind,
  amount: value,
  createdAt: deps.clock.now(),
});
const movementStatement = (deps: Deps, m: Movement, kind: MovementKind, value: number) =>
  insertMovementStatement(movement(deps, m, kind, value));

export async function walletBalance(db: Tx | Deps['db']['prisma'], brandId: string): Promise<number> {
  const w = await findWallet(db, brandId);
  return Number(w?.balance ?? 0n);
}

/**
 * Moves `value` from the wallet into the distribution's hold. The caller holds the wallet's lock (walletForReserve)
 * and saw the balance cover it; the conditional update keeps the wallet from going negative whatever happens.
 */
export function reserveStatements(deps: Deps, m: Movement & { distributionId: string }, value: number): Prisma.Sql[] {
  return [
    debitWalletStatement(m.brandId, value, deps.clock.now()),
    reserveHoldStatement(m.distributionId, value),
    movementStatement(deps, m, 'reserve', value),
  ];
}

/** Moves `value` of the distribution's hold to spent (a provider consumed it). */
export function spendStatements(deps: Deps, m: Movement & { distributionId: string }, value: number): Prisma.Sql[] {
  if (value <= 0) return [];
  return [spendHoldStatement(m.distributionId, value), movementStatement(deps, m, 'spend', value)];
}

/** Returns `value`, what the distribution holds, to the wallet. */
export function releaseStatements(deps: Deps, m: Movement & { distributionId: string }, value: number): Prisma.Sql[] {
  if (value <= 0) return [];
  return [
    releaseHoldStatement(m.distributionId, value),
    creditWalletStatement(m.brandId, value, deps.clock.now()),
    movementStatement(deps, m, 'release', value),
  ];
}

/** Returns everything the distribution still holds to the wallet; the amount released (0 when nothing was held). */
export async function releaseAll(deps: Deps, tx: Tx, m: Movement & { distributionId: string }): Promise<number> {
  const value = Number(await distributionReserved(tx, m.distributionId));
  await execute(tx, releaseStatements(deps, m, value));
  return Math.max(0, value);
}

export const TopUpInput = z.strictObject({ amount: amount.min(1) });

export interface PublicWallet {
  object: 'wallet';
  brand: string;
  balance: number;
  updated_at: string | null;
}

/**
 * The brand an operator names: its `brand_` id, or `<organization slug>.<brand slug>` (a brand slug is unique
 * only within its organization; slugs hold no dot, so the pair is unambiguous). Anything else is 404.
 */
async function brandOf(deps: Deps, brand: string) {
  const pair = /^([a-z0-9][a-z0-9-]{0,62})\.([a-z0-9][a-z0-9-]{0,62})$/.exec(brand);
  const row = await brandByRef(deps.db.prisma, pair ? { organizationSlug: pair[1]!, slug: pair[2]! } : { id: brand });
  if (!row)
    throw new DomainError('resource_missing', `No such brand: '${brand}' (name it by brand_ id or as <organization slug>.<brand slug>)`);
  return row;
}

export async function retrieveWallet(deps: Deps, brand: string): Promise<PublicWallet> {
  const b = await brandOf(deps, brand);
  const w = await findWallet(deps.db.prisma, b.id);
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
  const out = await runIdempotentValue(
    deps,
    key ? { namespace: `operator:wallet:${b.id}`, key, fingerprint: fingerprint('wallet.top_up', input) } : undefined,
    async (tx) => {
      const now = deps.clock.now();
      const w = await addToWallet(tx, { brandId: b.id, organizationId: b.organizationId, amount: input.amount, now });
      await insertMovement(tx, movement(deps, { organizationId: b.organizationId, brandId: b.id }, 'top_up', input.amount));
      await wakeOperations(deps, tx, { brandId: b.id, waitingReason: 'funding_required' });
      return { object: 'wallet', brand: b.id, balance: Number(w.balance), updated_at: w.updatedAt.toISOString() } satisfies PublicWallet;
    },
  );
  return out.value;
}
