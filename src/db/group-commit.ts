import type { BatchSend, SqlPort, TransactionOptions } from './sql-port.ts';

/**
 * Group commit for the batched SQL port (ADR 0003): concurrent transactions
 * that opt in (`transaction(fn, { group: true })`) run as members of one
 * database transaction, in lockstep rounds. Each round is one batch holding
 * every member's next statements, in member order; the group commits when
 * every member has sent its last batch (or returned). One BEGIN, one COMMIT,
 * one WAL flush and one round trip per round serve the whole group, where
 * each member would otherwise pay its own: on a hot write path those, not
 * the rows, are most of the database's and the driver's work.
 *
 * What a member may rely on is what a transaction of its own gives it:
 * - Nothing a member wrote is visible outside before the group commits, and a
 *   member's `send({ commit: true })` resolves only once the group has.
 * - Members never touch the same protected state: each names, with its
 *   statements, the keys it holds exclusively (`send(…, { keys })`, e.g. the
 *   entity it locks). A key already held by a group in flight makes a new
 *   member wait for a later group; a key named later in a member's run that
 *   another member of its group holds aborts the group.
 * - All or nothing, then alone: when a statement fails, a member throws, a
 *   key collides or the commit fails, the group rolls back and every member
 *   runs again in a transaction of its own (so a member's error is the one it
 *   gets alone, and nobody's rows depend on a failed neighbour's). A grouped
 *   body must therefore be safe to run twice, as the batched actions' bodies
 *   already are (they rerun when a provisional admission fails: action.ts).
 * - A body that names no key with its first batch fails with
 *   GroupContractError before anything is sent (`namingKeys`).
 *
 * `groups` bounds the groups in flight: while that many run, new members
 * gather for the next one, which is what makes groups larger under load; a
 * lone request waits at most one turn of the event loop. `members` caps a
 * group's size.
 */
export interface GroupCommitOptions {
  /** Groups in flight at once; 0 turns grouping off (every transaction runs alone). */
  groups: number;
  /** Members per group at most. */
  members: number;
  /** How long a group waits for one member to compute its next batch before it gives up and everyone runs alone. */
  stallMs?: number;
}

const STALL_MS = 2_000;

export const DEFAULT_GROUP_COMMIT: GroupCommitOptions = { groups: 2, members: 32 };

/** A grouped body broke the contract above: a programming error, answered at once and never rerun. */
export class GroupContractError extends Error {}

/**
 * The half of the contract the port can see, checked on every grouped run whether or not grouping is on (so a test
 * run with `groups: 0` catches it too): the body names its exclusive keys with its first batch. The other half (safe
 * to run twice) is the body's: batched actions rerun on a failed provisional admission (action.ts) anyway.
 */
export function namingKeys(send: BatchSend): BatchSend {
  let first = true;
  return (statements, o) => {
    if (first && !o?.keys?.length)
      throw new GroupContractError(
        'a grouped transaction names the keys it holds exclusively with its first batch (src/db/group-commit.ts)',
      );
    first = false;
    return send(statements, o);
  };
}

/** A member's group rolled back: the member reruns alone. Never escapes the port. */
class GroupAborted extends Error {
  constructor() {
    super('group commit aborted; rerunning alone');
  }
}

type Pending = {
  statements: Parameters<BatchSend>[0];
  commit: boolean;
  resolve(rows: Record<string, unknown>[][]): void;
  reject(e: unknown): void;
};

class Member {
  group: Group | undefined;
  pending: Pending | undefined;
  /** Sent its last batch (`commit`) or returned: waits for the group's commit. */
  done = false;
  /** A `commit` batch answered: its rows go out once the group has committed (or it fails with the group). */
  held: { p: Pending; rows: Record<string, unknown>[][] } | undefined;
}

class Group {
  readonly members: Member[] = [];
  readonly keys = new Map<string, Member>();
  started = false;
  aborted = false;
  committed = false;
  /** What rolled the group back, when it was a statement's or a member's error (a lone member's answer). */
  cause: unknown;
  private wake: (() => void) | undefined;
  /** Resolves when the group's transaction has started, and when it is over (committed or rolled back). */
  readonly begun: Promise<void>;
  readonly settled: Promise<void>;
  begin!: () => void;
  finish!: () => void;

  constructor() {
    this.begun = new Promise((resolve) => (this.begin = resolve));
    this.settled = new Promise((resolve) => (this.finish = resolve));
  }

  /** A round can go when no member is still computing between two batches. */
  ready(): boolean {
    return this.aborted || this.members.every((m) => m.pending || m.done);
  }

  poke() {
    if (this.wake && this.ready()) {
      const w = this.wake;
      this.wake = undefined;
      w();
    }
  }

  /**
   * Until every member has its next batch ready. A member that computes longer than `ms` between two batches (waiting
   * on something outside, perhaps on a lock its own group holds) aborts the group, so nobody waits on it for ever.
   */
  waitReady(ms: number): Promise<void> {
    if (this.ready()) return Promise.resolve();
    return new Promise((resolve) => {
      // Alone, a member is a transaction of its own: nobody waits on it.
      const timer = this.alone ? undefined : setTimeout(() => this.abort(), ms);
      this.wake = () => (clearTimeout(timer), resolve());
    });
  }

  /** One member: the group is exactly that member's own transaction, so its failure is the member's answer. */
  get alone(): boolean {
    return this.members.length === 1;
  }

  /** Rolls the group back: members fail with the cause when alone, else with GroupAborted (they rerun alone). */
  abort(cause?: unknown) {
    if (this.aborted) return;
    this.aborted = true;
    this.cause = cause;
    for (const m of this.members) {
      const p = m.pending ?? m.held?.p;
      m.pending = undefined;
      m.held = undefined;
      p?.reject(this.alone && cause !== undefined ? cause : new GroupAborted());
    }
    this.poke();
  }
}

/** Counters since the port was made (metrics: `platform_group_commit_*`). */
export interface GroupCommitStats {
  /** Groups that committed, and that rolled back. */
  committed: number;
  rolledBack: number;
  /** Transactions carried by committed groups; members / committed is the mean group size. */
  members: number;
  /** Members that ran again alone after their group rolled back. */
  reruns: number;
}

export type GroupCommitPort = SqlPort & { readonly groupStats: GroupCommitStats };

export function groupCommitPort(base: SqlPort, opts: GroupCommitOptions = DEFAULT_GROUP_COMMIT): GroupCommitPort {
  const stats: GroupCommitStats = { committed: 0, rolledBack: 0, members: 0, reruns: 0 };
  if (opts.groups <= 0)
    return {
      rows: base.rows,
      transaction: (fn, o?: TransactionOptions) => base.transaction(o?.group ? (send) => fn(namingKeys(send)) : fn),
      groupStats: stats,
    };
  let forming: Group | undefined;
  const running = new Set<Group>();
  /** Keys of every member of the forming group and the groups in flight. */
  const held = new Map<string, Group>();

  const start = (g: Group) => {
    if (forming === g) forming = undefined;
    g.started = true;
    g.begin();
    running.add(g);
    void run(g).finally(() => {
      running.delete(g);
      for (const k of g.keys.keys()) if (held.get(k) === g) held.delete(k);
      g.finish();
      if (forming && !forming.started && running.size < opts.groups) start(forming);
    });
  };

  /** The group's one transaction: rounds until every member is done, then the commit; any failure aborts it. */
  async function run(g: Group) {
    try {
      await base.transaction(async (send) => {
        for (;;) {
          await g.waitReady(opts.stallMs ?? STALL_MS);
          if (g.aborted) throw new GroupAborted();
          const round = g.members.filter((m) => m.pending);
          const commit = g.members.every((m) => m.done || m.pending?.commit);
          const statements = round.flatMap((m) => m.pending!.statements);
          const rows = statements.length || commit ? await send(statements, { commit }) : [];
          if (g.aborted) throw new GroupAborted();
          let at = 0;
          for (const m of round) {
            const p = m.pending!;
            m.pending = undefined;
            const mine = rows.slice(at, (at += p.statements.length));
            if (p.commit) {
              m.done = true;
              m.held = { p, rows: mine };
            } else p.resolve(mine);
          }
          if (commit) return;
        }
      });
      g.committed = true;
      stats.committed++;
      stats.members += g.members.length;
      for (const m of g.members) {
        const h = m.held;
        m.held = undefined;
        h?.p.resolve(h.rows);
      }
    } catch (e) {
      stats.rolledBack++;
      g.abort(e instanceof GroupAborted ? undefined : e);
    }
  }

  /** A member's first batch: it joins the forming group unless a key it names is held, or the group is full. */
  async function join(m: Member, keys: readonly string[]): Promise<Group> {
    for (;;) {
      const busy = keys.map((k) => held.get(k)).find((g) => g && g !== forming);
      const clash = forming && keys.some((k) => forming!.keys.has(k));
      if (busy) {
        await busy.settled;
        continue;
      }
      if (clash || (forming && forming.members.length >= opts.members)) {
        await forming!.begun;
        continue;
      }
      if (!forming) {
        const g = (forming = new Group());
        setImmediate(() => {
          if (!g.started && running.size < opts.groups) start(g);
        });
      }
      const g = forming;
      g.members.push(m);
      for (const k of keys) {
        g.keys.set(k, m);
        held.set(k, g);
      }
      return g;
    }
  }

  /** A key named after the first batch: another member of the group holding it aborts the group. */
  function claim(m: Member, g: Group, keys: readonly string[]) {
    for (const k of keys) {
      const owner = g.keys.get(k);
      if (owner && owner !== m) return false;
      g.keys.set(k, m);
      if (!held.has(k)) held.set(k, g);
    }
    return true;
  }

  async function grouped<T>(fn: (send: BatchSend) => Promise<T>): Promise<T> {
    const m = new Member();
    const send: BatchSend = namingKeys(async (statements, o) => {
      const keys = o?.keys ?? [];
      if (!m.group) {
        m.group = await join(m, keys);
      } else if (!claim(m, m.group, keys)) m.group.abort();
      const g = m.group;
      if (g.aborted || m.done) throw new GroupAborted();
      return new Promise((resolve, reject) => {
        m.pending = { statements, commit: o?.commit ?? false, resolve, reject };
        g.poke();
      });
    });
    try {
      const out = await fn(send);
      const g = m.group;
      if (g) {
        if (!m.done) {
          m.done = true;
          g.poke();
        }
        await g.settled;
        if (g.aborted) throw g.alone && g.cause !== undefined ? g.cause : new GroupAborted();
      }
      return out;
    } catch (e) {
      const g = m.group;
      // Never joined, or failed after the group committed (its rows are in): the error is the member's own.
      if (!g || g.committed) throw e;
      g.abort(e);
      await g.settled;
      if (g.alone) throw e;
      stats.reruns++;
      return base.transaction(fn);
    }
  }

  return {
    rows: base.rows,
    transaction: (fn, o?: TransactionOptions) => (o?.group ? grouped(fn) : base.transaction(fn)),
    groupStats: stats,
  };
}
