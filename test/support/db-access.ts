import type { App } from '../../src/app.ts';
import { type Database, Prisma } from '../../src/db/database.ts';
import { insertEvents, type NewEvent } from '../../src/domain/event/event.ts';
import { newId } from '../../src/domain/id.ts';

/**
 * The kit's reads and writes of rows the API does not expose or would not let a caller make: a state set up behind
 * the API's back (an endpoint stored before a policy, a crashed writer's event, an operation held by another
 * worker) or a row a test inspects (only a hash is stored). Tests reach the database through these, or through a
 * capability's store (`src/domain/<capability>/store.ts`) where one already does it; `scripts/check-sql.mjs` lists the
 * few test files that speak SQL themselves, each with its reason. Tests import this file directly.
 */
type On = { app: App };
const prisma = (t: On) => t.app.deps.db.prisma;

// Events

/** Rows inserted as another writer left them (committed, never sequenced, or sequenced by an older sequencer). */
export const insertEventRow = (t: On, data: Prisma.EventUncheckedCreateInput) => prisma(t).event.create({ data });

/** `events` appended in one statement of one transaction (a volume too large for one request each). */
export async function insertEventsAtOnce(t: On, events: NewEvent[]): Promise<void> {
  const { deps } = t.app;
  await deps.db.sql.transaction((send) => send([insertEvents(deps, events)], { commit: true }));
}

/** The internal events (never in a feed) of `type` about `subjectId`. */
export const internalEvents = (t: On, subjectId: string, type: string) => prisma(t).event.findMany({ where: { subjectId, type } });

/** Every seq the organization's log holds (public and internal events), in seq order. */
export async function seqsInLog(t: On, organizationId: string): Promise<number[]> {
  const rows = await prisma(t).event.findMany({
    where: { organizationId, seq: { not: null } },
    orderBy: { seq: 'asc' },
    select: { seq: true },
  });
  return rows.map((r) => Number(r.seq));
}

/** Each event of the organization as `[seq, position]`, in position order. */
export async function seqsAndPositions(t: On, organizationId: string): Promise<[number, bigint | null][]> {
  const rows = await prisma(t).event.findMany({
    where: { organizationId },
    orderBy: { position: 'asc' },
    select: { seq: true, position: true },
  });
  return rows.map((r) => [Number(r.seq), r.position]);
}

/** The seq of sequenced events, by id. */
export async function seqsOf(app: App, ids: string[]): Promise<number[]> {
  const rows = await app.deps.db.prisma.event.findMany({ where: { id: { in: ids } }, select: { id: true, seq: true } });
  const by = new Map(rows.map((r) => [r.id, Number(r.seq)]));
  return ids.map((id) => by.get(id)!);
}

/** `synchronous_commit` on every connection the app's writes may use (the pool's, all held at once; PGlite's one). */
export async function synchronousCommitSettings(t: On): Promise<string[]> {
  const { db } = t.app.deps;
  const settings: string[] = [];
  if (db.pool) {
    const clients = await Promise.all(Array.from({ length: db.pool.totalCount }, () => db.pool!.connect()));
    for (const c of clients) settings.push((await c.query('SHOW synchronous_commit')).rows[0].synchronous_commit);
    for (const c of clients) c.release();
  } else {
    const [rows] = await db.sql.transaction((send) =>
      send([Prisma.sql`SELECT current_setting('synchronous_commit') AS s`], { commit: true }),
    );
    settings.push(String(rows![0]!.s));
  }
  return settings;
}

// Operations (reads by id: the store's operationById)

/** An operation row written without the rules that guard its insert (the database's own constraints still apply). */
export const insertOperationRow = (t: On, data: Prisma.OperationUncheckedCreateInput) => prisma(t).operation.create({ data });

/** An operation changed behind the engine's back (held by another worker, a lease taken over, due earlier). */
export const updateOperationRow = (t: On, id: string, data: Prisma.OperationUncheckedUpdateInput) =>
  prisma(t).operation.update({ where: { id }, data });

/** A test handler's write, as a statement of its step's batch: the operation's progress says it ran. */
export const markWrittenStatement = (id: string) => Prisma.sql`UPDATE "operation" SET progress = '{"written": true}' WHERE id = ${id}`;

export const countOperations = (t: On, where: Prisma.OperationWhereInput) => prisma(t).operation.count({ where });

// Money

/** Every wallet movement of a brand, and its distributions (what they hold and spent). */
export const walletMovementsOf = (t: On, brandId: string) => prisma(t).walletMovement.findMany({ where: { brandId } });
export const distributionsOf = (t: On, brandId: string) => prisma(t).distribution.findMany({ where: { brandId } });

// Ledger and payouts (fixtures for reads: accrual and runs are proven in test/payout/)

export interface LedgerEntryFixture {
  id: string;
  organizationId: string;
  brandId: string;
  programId: string;
  enrollmentId: string;
  entityId: string;
  /** Also its source period's start. */
  periodStart: Date;
  periodEnd: Date;
  value: number;
  rateBps: number;
  earned: number;
  carry: number;
  amount: number;
}

/** One unpaid accrual, written directly. */
export async function insertLedgerEntry(t: On, e: LedgerEntryFixture): Promise<void> {
  await prisma(t).$executeRaw`
    INSERT INTO ledger_entry (id, organization_id, brand_id, program_id, enrollment_id, entity_id, kind, period_start, period_end,
      source_period_start, qualified, value, rate_bps, earned, carry, amount)
    VALUES (${e.id}, ${e.organizationId}, ${e.brandId}, ${e.programId}, ${e.enrollmentId}, ${e.entityId}, 'accrual',
      ${e.periodStart}::timestamptz, ${e.periodEnd}::timestamptz, ${e.periodStart}::timestamptz, true, ${e.value}::numeric,
      ${e.rateBps}::int, ${e.earned}::numeric, ${e.carry}::numeric, ${e.amount}::bigint)`;
}

/** An entity known by an external user id, written directly. */
export async function insertEntity(t: On, e: { id: string; organizationId: string; externalUserId: string; issuer: string }) {
  await prisma(t).$executeRaw`INSERT INTO entity (id, organization_id, external_user_id, issuer)
    VALUES (${e.id}, ${e.organizationId}, ${e.externalUserId}, ${e.issuer})`;
}

/** The ledger refuses it (append-only): the attempts to change or remove an entry. */
export const rewriteLedgerEntry = (t: On, id: string) => prisma(t).$executeRaw`UPDATE ledger_entry SET amount = 0 WHERE id = ${id}`;
export const deleteLedgerEntry = (t: On, id: string) => prisma(t).$executeRaw`DELETE FROM ledger_entry WHERE id = ${id}`;

/** A payout row, written directly. */
export const insertPayoutRow = (t: On, data: Prisma.PayoutUncheckedCreateInput) => prisma(t).payout.create({ data });

/**
 * `n` ledger entries of 7 minor units for a new entity of `user` in the day of `start`, written directly in one
 * statement (ids below any real one, program `prog_seed`): the exports' volume fixtures.
 */
export async function seedLedger(db: Database['prisma'], org: string, brand: string, n: number, start: Date, user = 'u-1') {
  const entity = newId('entity');
  await db.$executeRaw`INSERT INTO entity (id, organization_id, external_user_id, issuer) VALUES (${entity}, ${org}, ${user}, 'https://idp.example')`;
  const end = new Date(start.getTime() + 86_400_000);
  await db.$executeRaw`
    INSERT INTO ledger_entry (id, organization_id, brand_id, program_id, enrollment_id, entity_id, kind, period_start, period_end,
      source_period_start, qualified, value, rate_bps, earned, carry, amount)
    SELECT 'le_' || lpad(to_hex(g), 24, '0') || substr(md5(${entity}), 1, 8), ${org}, ${brand}, 'prog_seed',
           'enr_' || g || ${entity}, ${entity},
           'accrual', ${start}::timestamptz, ${end}::timestamptz, ${start}::timestamptz, true, 70, 1000, 7, 0, 7
      FROM generate_series(1, ${n}::int) g`;
  return entity;
}

// Rows a test inspects

/** The brand's row whatever its organization. */
export const brandRow = (t: On, id: string) => prisma(t).brand.findUniqueOrThrow({ where: { id } });
export const enrollmentRow = (t: On, id: string) => prisma(t).enrollment.findUniqueOrThrow({ where: { id } });
export const programRow = (t: On, id: string) => prisma(t).program.findUniqueOrThrow({ where: { id } });
export const platformTokenRow = (t: On, id: string) => prisma(t).platformToken.findUniqueOrThrow({ where: { id } });
export const handoffIssuerRow = (t: On, id: string) => prisma(t).handoffIssuer.findUniqueOrThrow({ where: { id } });

/** A token issued before a scope was renamed: its stored scopes, which the API no longer accepts. */
export const setTokenScopes = (t: On, id: string, scopes: string[]) => prisma(t).platformToken.update({ where: { id }, data: { scopes } });

// Connect

export const connectSessionOfEntity = (t: On, entityId: string) => prisma(t).connectSession.findFirstOrThrow({ where: { entityId } });
export const countConnectSessions = (t: On, keyId: string) => prisma(t).connectSession.count({ where: { keyId } });
export const countRedemptions = (t: On, issuerId: string) => prisma(t).handoffRedemption.count({ where: { issuerId } });
export const countRelationships = (t: On, brandId: string) => prisma(t).relationship.count({ where: { brandId } });
export const connectionsOfEntity = (t: On, entityId: string) =>
  prisma(t).connection.findMany({ where: { entityId }, select: { accountId: true } });
export const countConnectionsOfAccount = (t: On, accountId: string) => prisma(t).connection.count({ where: { accountId } });

// Surface A

/** Unit rows of an organization straight from the database (independent of the list route). */
export const unitCount = (t: On, organizationId: string) => prisma(t).unit.count({ where: { organizationId } });

export const auditRows = (t: On, organizationId: string) =>
  prisma(t).auditRecord.findMany({ where: { organizationId }, orderBy: { id: 'asc' } });

// The planner

/** How many columns of `table` the planner has statistics for (`pg_stats`: filled by ANALYZE). */
export async function plannerStatisticsOf(t: On, table: string): Promise<number> {
  const rows = await prisma(t).$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stats WHERE tablename = ${table}`;
  return rows[0]!.n;
}
