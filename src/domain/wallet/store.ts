import { Prisma, type Tx } from '../../db/database.ts';
import type { BrandWallet, PrismaClient } from '../../db/generated/client.ts';

/**
 * The wallet's SQL (docs/architecture.md "Stores"): a brand's balance (`brand_wallet`) and its append-only ledger of
 * movements (`wallet_movement`). Amounts are integer minor units, given as a number or as the text of a bigint.
 */
type Db = Tx | PrismaClient;

export type MovementKind = 'top_up' | 'reserve' | 'release' | 'spend';

export interface NewMovement {
  id: string;
  organizationId: string;
  brandId: string;
  kind: MovementKind;
  amount: number | string;
  distributionId?: string | null;
  operationId?: string | null;
  createdAt: Date;
}

export function insertMovementStatement(m: NewMovement): Prisma.Sql {
  return Prisma.sql`INSERT INTO wallet_movement (id, organization_id, brand_id, kind, amount, distribution_id, operation_id, created_at)
    VALUES (${m.id}, ${m.organizationId}, ${m.brandId}, ${m.kind}, ${m.amount}::bigint, ${m.distributionId ?? null}, ${m.operationId ?? null},
      ${m.createdAt}::timestamptz)`;
}

export async function insertMovement(tx: Tx, m: NewMovement): Promise<void> {
  await tx.$executeRaw(insertMovementStatement(m));
}

/** Several movements of one operation in one statement (a payout run's settlements). */
export async function insertMovements(
  tx: Tx,
  of: { organizationId: string; brandId: string; operationId: string; createdAt: Date },
  movements: { id: string; kind: MovementKind; amount: string }[],
): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO wallet_movement (id, organization_id, brand_id, kind, amount, operation_id, created_at)
    SELECT m.id, ${of.organizationId}, ${of.brandId}, m.kind, m.amount::bigint, ${of.operationId}, ${of.createdAt}::timestamptz
      FROM json_to_recordset(${JSON.stringify(movements)}::json) AS m(id text, kind text, amount text)`;
}

/**
 * Takes `value` from the wallet. The caller holds the wallet's lock and saw the balance cover it; the conditional
 * update keeps the wallet from going negative whatever happens.
 */
export const debitWalletStatement = (brandId: string, value: number | string, now: Date): Prisma.Sql =>
  Prisma.sql`UPDATE brand_wallet SET balance = balance - ${value}::bigint, updated_at = ${now}::timestamptz
      WHERE brand_id = ${brandId} AND balance >= ${value}::bigint`;

export const creditWalletStatement = (brandId: string, value: number | string, now: Date): Prisma.Sql =>
  Prisma.sql`UPDATE brand_wallet SET balance = balance + ${value}::bigint, updated_at = ${now}::timestamptz WHERE brand_id = ${brandId}`;

export async function debitWallet(tx: Tx, brandId: string, value: number | string, now: Date): Promise<void> {
  await tx.$executeRaw(debitWalletStatement(brandId, value, now));
}

export async function creditWallet(tx: Tx, brandId: string, value: number | string, now: Date): Promise<void> {
  await tx.$executeRaw(creditWalletStatement(brandId, value, now));
}

export function findWallet(db: Db, brandId: string): Promise<BrandWallet | null> {
  return db.brandWallet.findUnique({ where: { brandId } });
}

/** The brand's balance (text), locked until the commit; none when the brand has no wallet. */
export async function lockWallet(tx: Tx, brandId: string): Promise<{ balance: string } | undefined> {
  const [wallet] = await tx.$queryRaw<
    { balance: string }[]
  >`SELECT balance::text AS balance FROM brand_wallet WHERE brand_id = ${brandId} FOR UPDATE`;
  return wallet;
}

/**
 * The balance of the brand of `distributionId` (one row, `balance` as text), locked until the commit, when the
 * distribution still needs money:
 * a reservation decided on it cannot be overtaken. No row when nothing is needed or the brand has no wallet.
 */
export function walletForReserve(distributionId: string): Prisma.Sql {
  return Prisma.sql`SELECT w.balance::text AS balance FROM distribution d JOIN brand_wallet w ON w.brand_id = d.brand_id
    WHERE d.id = ${distributionId} AND d.budget - d.reserved - d.spent > 0 FOR UPDATE OF w`;
}

/** Adds `amount` to the brand's wallet, creating it on the first top-up. */
export function addToWallet(tx: Tx, w: { brandId: string; organizationId: string; amount: number; now: Date }): Promise<BrandWallet> {
  return tx.brandWallet.upsert({
    where: { brandId: w.brandId },
    create: { brandId: w.brandId, organizationId: w.organizationId, balance: w.amount, updatedAt: w.now },
    update: { balance: { increment: w.amount }, updatedAt: w.now },
  });
}
