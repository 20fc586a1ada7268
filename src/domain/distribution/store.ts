import { Prisma, type Tx } from '../../db/database.ts';
import type { Deployment, Distribution, PrismaClient } from '../../db/generated/client.ts';
import { statement, type SqlPort } from '../../db/sql-port.ts';

/**
 * The SQL of distributions and their deployments (docs/architecture.md "Stores"): Prisma for the verbs' reads and
 * writes, statements for the batched port the launch and its provisioning children commit on.
 */
type Db = Tx | PrismaClient;

/** Which rows: the brand's (a caller selecting a brand has this shape). */
export interface BrandScope {
  organization: { id: string };
  brand: { id: string };
}

/** A page's lower bound (list.ts's `newestFirst`). */
type Below = { id?: { lt: string } };

// Distributions

/** A distribution of the brand; another brand's, another organization's is not found. */
export function brandDistribution(db: Db, scope: BrandScope, id: string): Promise<Distribution | null> {
  return db.distribution.findFirst({ where: { id, organizationId: scope.organization.id, brandId: scope.brand.id } });
}

export function distributionsPage(
  db: Db,
  scope: BrandScope,
  status: string | undefined,
  below: Below,
  take: number,
): Promise<Distribution[]> {
  const where = { organizationId: scope.organization.id, brandId: scope.brand.id, ...(status ? { status } : {}) };
  return db.distribution.findMany({ where: { ...where, ...below }, orderBy: { id: 'desc' }, take });
}

export function distributionById(db: Db, id: string): Promise<Distribution> {
  return db.distribution.findUniqueOrThrow({ where: { id } });
}

export async function distributionBrand(db: Db, id: string): Promise<string> {
  const { brandId } = await db.distribution.findUniqueOrThrow({ where: { id }, select: { brandId: true } });
  return brandId;
}

export function updateDistribution(
  tx: Tx,
  id: string,
  data: { status: string; pausedFrom?: string | null; updatedAt: Date },
): Promise<Distribution> {
  return tx.distribution.update({ where: { id }, data });
}

export function insertDistributionStatement(d: {
  id: string;
  organizationId: string;
  brandId: string;
  name: string;
  budget: number;
  now: Date;
}): Prisma.Sql {
  return Prisma.sql`INSERT INTO distribution (id, organization_id, brand_id, name, status, budget, created_at, updated_at)
      VALUES (${d.id}, ${d.organizationId}, ${d.brandId}, ${d.name}, 'launching', ${d.budget}::bigint, ${d.now}::timestamptz, ${d.now}::timestamptz)`;
}

/** A distribution row on the batched port (int8 as text, whatever the driver), and its read. */
export const distributionReadStatement = (
  id: string,
) => Prisma.sql`SELECT id, organization_id AS "organizationId", brand_id AS "brandId", name, status,
  budget::text AS budget, reserved::text AS reserved, spent::text AS spent, paused_from AS "pausedFrom", livemode, created_at AS "createdAt",
  updated_at AS "updatedAt" FROM distribution WHERE id = ${id}`;
export const distributionOf = (r: Record<string, unknown>): Distribution =>
  ({ ...r, budget: BigInt(r.budget as string), reserved: BigInt(r.reserved as string), spent: BigInt(r.spent as string) }) as Distribution;

export const setDistributionStatusStatement = (id: string, status: string, now: Date): Prisma.Sql =>
  Prisma.sql`UPDATE distribution SET status = ${status}, updated_at = ${now}::timestamptz WHERE id = ${id}`;

// The distribution's hold: money reserved from the wallet and not yet spent or released (the wallet's moves compose these).

export async function distributionReserved(tx: Tx, id: string): Promise<bigint> {
  const dist = await tx.distribution.findUniqueOrThrow({ where: { id }, select: { reserved: true } });
  return dist.reserved;
}

export const reserveHoldStatement = (id: string, value: number): Prisma.Sql =>
  Prisma.sql`UPDATE distribution SET reserved = reserved + ${value}::bigint WHERE id = ${id}`;

export const spendHoldStatement = (id: string, value: number): Prisma.Sql =>
  Prisma.sql`UPDATE distribution SET reserved = reserved - ${value}::bigint, spent = spent + ${value}::bigint WHERE id = ${id}`;

export const releaseHoldStatement = (id: string, value: number): Prisma.Sql =>
  Prisma.sql`UPDATE distribution SET reserved = reserved - ${value}::bigint WHERE id = ${id}`;

// Deployments

const DEPLOYMENT_SELECT = Prisma.sql`d.id, d.organization_id AS "organizationId", d.distribution_id AS "distributionId", d.provider,
  d.config, d.status, d.provider_state AS "providerState", d.connection_id AS "connectionId", d.livemode,
  d.created_at AS "createdAt", d.updated_at AS "updatedAt"`;

/**
 * The brand's deployments, newest first: a deployment belongs to its distribution's brand, so every read joins the
 * distribution and the brand is part of the lookup's key (another brand's deployment is never found).
 */
export function brandDeployments(
  db: Db,
  scope: BrandScope,
  only: { id?: string; distributionId?: string; below?: string },
  take: number,
): Promise<Deployment[]> {
  const and = (value: string | undefined, sql: Prisma.Sql) => (value === undefined ? Prisma.empty : sql);
  return db.$queryRaw<Deployment[]>`SELECT ${DEPLOYMENT_SELECT} FROM deployment d JOIN distribution x ON x.id = d.distribution_id
    WHERE d.organization_id = ${scope.organization.id} AND x.brand_id = ${scope.brand.id}
      ${and(only.id, Prisma.sql`AND d.id = ${only.id}`)}
      ${and(only.distributionId, Prisma.sql`AND d.distribution_id = ${only.distributionId}`)}
      ${and(only.below, Prisma.sql`AND d.id < ${only.below}`)}
    ORDER BY d.id DESC LIMIT ${take}`;
}

export function insertDeploymentsStatement(deployments: Deployment[]): Prisma.Sql {
  const rows = deployments.map((d) => ({
    id: d.id,
    organization_id: d.organizationId,
    distribution_id: d.distributionId,
    provider: d.provider,
    config: d.config,
    connection_id: d.connectionId,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  }));
  return Prisma.sql`INSERT INTO deployment (id, organization_id, distribution_id, provider, config, connection_id, created_at, updated_at)
      SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json)
        AS x(id text, organization_id text, distribution_id text, provider text, config jsonb, connection_id text, created_at timestamptz, updated_at timestamptz)`;
}

export function findDeployment(db: Db, id: string): Promise<Deployment | null> {
  return db.deployment.findUnique({ where: { id } });
}

export function deploymentByIdOrThrow(db: Db, id: string): Promise<Deployment> {
  return db.deployment.findUniqueOrThrow({ where: { id } });
}

/** A distribution's deployments in a status, or in any of several. */
export function deploymentsOf(db: Db, distributionId: string, status: string | readonly string[]): Promise<Deployment[]> {
  return db.deployment.findMany({ where: { distributionId, status: typeof status === 'string' ? status : { in: [...status] } } });
}

export async function deploymentIdsOf(db: Db, distributionId: string, status: string): Promise<string[]> {
  return (await db.deployment.findMany({ where: { distributionId, status }, select: { id: true } })).map((x) => x.id);
}

export function setDeploymentStatus(tx: Tx, id: string, status: string, now: Date): Promise<Deployment> {
  return tx.deployment.update({ where: { id }, data: { status, updatedAt: now } });
}

export function setProviderState(tx: Tx, id: string, providerState: Prisma.InputJsonObject, now: Date): Promise<Deployment> {
  return tx.deployment.update({ where: { id }, data: { providerState, updatedAt: now } });
}

const DEPLOYMENT_COLUMNS = `id, organization_id AS "organizationId", distribution_id AS "distributionId", provider, config, status,
  provider_state AS "providerState", connection_id AS "connectionId", livemode, created_at AS "createdAt", updated_at AS "updatedAt"`;
const deploymentByIdStatement = statement<[id: string], Deployment>(
  'deployment_by_id',
  `SELECT ${DEPLOYMENT_COLUMNS} FROM deployment WHERE id = $1`,
);

/** One deployment on the SQL port (a provisioning step's read). */
export async function deploymentById(sql: SqlPort, id: string): Promise<Deployment | undefined> {
  const [row] = await sql.rows(deploymentByIdStatement, [id]);
  return row;
}

/** The deployments a launch provisions (batched): those not placed yet, or placed and failed or rejected. */
export const deploymentsToProvisionStatement = (distributionId: string): Prisma.Sql =>
  Prisma.sql`SELECT ${Prisma.raw(DEPLOYMENT_COLUMNS)} FROM deployment WHERE distribution_id = ${distributionId} AND status IN ('pending', 'failed', 'rejected') ORDER BY id`;

export const startProvisioningStatement = (ids: string[], now: Date): Prisma.Sql =>
  Prisma.sql`UPDATE deployment SET status = 'provisioning', provider_state = '{}', updated_at = ${now}::timestamptz
                WHERE id = ANY (ARRAY(SELECT json_array_elements_text(${JSON.stringify(ids)}::json)))`;

export const deploymentStatusesStatement = (distributionId: string): Prisma.Sql =>
  Prisma.sql`SELECT status FROM deployment WHERE distribution_id = ${distributionId}`;

export const setDeploymentStatusStatement = (id: string, status: string, now: Date): Prisma.Sql =>
  Prisma.sql`UPDATE deployment SET status = ${status}, updated_at = ${now}::timestamptz WHERE id = ${id}`;

/** The deployments placed through a connection in one of `statuses`, by id (revoking the connection tears the live ones down). */
export function deploymentsOnConnection(tx: Tx, connectionId: string, statuses: readonly string[]): Promise<Deployment[]> {
  return tx.deployment.findMany({ where: { connectionId, status: { in: [...statuses] } }, orderBy: { id: 'asc' } });
}
