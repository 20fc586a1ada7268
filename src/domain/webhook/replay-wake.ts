import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { wakeReplays, wakeReplaysIn } from './store.ts';

/**
 * A replay waits `awaiting_deliveries` until none of its deliveries is live (replay.ts); whatever settles replayed
 * deliveries (a recorded attempt, an exhaust) wakes their replays that have no live delivery left (the store's wake
 * statement says how the last of racing settlements always wakes it). The statement notifies other processes'
 * workers when it woke one; these kick this process's.
 */
const unique = (replays: (string | null)[]) => [...new Set(replays.filter((r): r is string => !!r))];

/** After replayed deliveries settled (committed): wakes their replays that have no live delivery left. */
export async function wakeSettledReplays(deps: Deps, replays: (string | null)[]): Promise<void> {
  const ids = unique(replays);
  if (!ids.length) return;
  if (await wakeReplays(deps.db.sql, ids, deps.clock.now(), deps.operations?.id ?? '')) deps.operations?.kick();
}

/** The same inside the transaction that settled them: the workers look once it commits. */
export async function wakeSettledReplaysIn(deps: Deps, tx: Tx, replays: (string | null)[]): Promise<void> {
  const ids = unique(replays);
  if (!ids.length) return;
  if (await wakeReplaysIn(tx, ids, deps.clock.now(), deps.operations?.id ?? '')) deps.db.afterCommit(tx, () => deps.operations?.kick());
}
