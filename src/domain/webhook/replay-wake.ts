import type { Tx } from '../../db/database.ts';
import { inBatch, statement } from '../../db/sql-port.ts';
import type { Deps } from '../context.ts';
import { OPERATIONS_CHANNEL } from '../operation/store.ts';

/**
 * A replay waits `awaiting_deliveries` until none of its deliveries is live (replay.ts); the delivery that settles
 * last wakes it. Whatever settles replayed deliveries (a recorded attempt, an exhaust) runs this statement for their
 * replays, after the settlement: a replay is woken when no delivery of its is pending or failing any more. Run after
 * the settling commit (or later in the settling transaction), the last of several settlements racing in other
 * processes sees every other one, so one of them always wakes it. A replay whose step is in flight is matched too,
 * so the statement waits for that step's commit and wakes it if it committed `waiting` on a count read before this
 * settlement (as settleStatement does for a cancel). It notifies other processes' workers when it woke one; the
 * caller kicks this process's.
 */
const wakeStatement = statement<[replays: string[], now: Date, sender: string], { woken: number }>(
  'webhook_replay_wake',
  `WITH touched AS (
     UPDATE "operation" o SET run_after = CASE WHEN o.status = 'waiting' THEN $2::timestamptz ELSE o.run_after END
     WHERE o.id = ANY($1::text[]) AND o.status IN ('pending', 'running', 'waiting')
       AND NOT EXISTS (SELECT 1 FROM webhook_delivery d WHERE d.replay_operation_id = o.id AND d.status IN ('pending', 'failing'))
     RETURNING o.status = 'waiting' AS woke
   ), notified AS (
     SELECT pg_notify('${OPERATIONS_CHANNEL}', $3) FROM (SELECT FROM touched WHERE woke LIMIT 1) first
   )
   SELECT (SELECT count(*)::int FROM touched WHERE woke) AS woken, (SELECT count(*)::int FROM notified) AS notified`,
);

const params = (deps: Deps, replays: string[]): [string[], Date, string] => [replays, deps.clock.now(), deps.operations?.id ?? ''];

/** After replayed deliveries settled (committed): wakes their replays that have no live delivery left. */
export async function wakeSettledReplays(deps: Deps, replays: (string | null)[]): Promise<void> {
  const ids = [...new Set(replays.filter((r): r is string => !!r))];
  if (!ids.length) return;
  const [row] = await deps.db.sql.rows(wakeStatement, params(deps, ids));
  if (row?.woken) deps.operations?.kick();
}

/** The same inside the transaction that settled them: the workers look once it commits. */
export async function wakeSettledReplaysIn(deps: Deps, tx: Tx, replays: (string | null)[]): Promise<void> {
  const ids = [...new Set(replays.filter((r): r is string => !!r))];
  if (!ids.length) return;
  const [row] = await tx.$queryRaw<{ woken: number }[]>(inBatch(wakeStatement, params(deps, ids)));
  if (row?.woken) deps.db.afterCommit(tx, () => deps.operations?.kick());
}
