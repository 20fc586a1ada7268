import { hasUnsequenced, sequenceStatements, streamPullSql, type StreamRow } from '../domain/event/store.ts';
import type { Deps } from '../domain/context.ts';
import { Loop } from './loop.ts';

/**
 * Gives committed events their `seq` (public, per organization) and their
 * `position` (internal, global).
 *
 * Invariant: a reader paging an organization's feed by `seq`, or tailing the
 * whole log by `position`, never misses an event. Were either number drawn
 * inside each writer's transaction, a transaction holding 10 could commit
 * after one holding 11, and a reader that had already moved past 11 would
 * never see 10. Instead writers insert with both NULL, and this sequencer
 * numbers committed rows in one short transaction under a cluster-wide
 * advisory lock: sequencing transactions are serialized, so every number
 * becomes visible only after all smaller ones. Within a batch, positions
 * follow id order and each organization's seqs continue densely from its own
 * maximum in position order, so `seq` order equals `position` order inside an
 * organization (ADR 0005). Writers never wait on each other, and one NOTIFY
 * per batch (not per event) wakes the other processes. A batch numbers every
 * pending event of every organization (up to 1,000) in one round trip, and
 * wake-ups that arrive while a batch runs coalesce into the next one.
 */
export const SEQUENCER_LOCK_KEY = 7_351_001;

/** How the sequencer tells its process about its batches: ports given at construction (src/runtime/services.ts wires them to the stream and the fan-out). */
export interface SequencerPorts {
  /**
   * After a batch commits: the highest position it assigned and, when `readFrom` asked for it, what the batch's
   * transaction read past that position (the batch included).
   */
  onSequenced(maxPosition: bigint, read?: { after: bigint; rows: StreamRow[] }): void;
  /** Where this process's live stream would read next, if now (it has subscribers): the batch then reads for it. */
  readFrom?(): bigint | undefined;
  /** Before a batch's transaction starts (its NOTIFY may reach this process before its commit is acknowledged). */
  onBatchStart?(): void;
  /** After every batch, committed or failed. */
  onBatchEnd?(): void;
}
const BATCH = 1000;
export const EVENTS_CHANNEL = 'platform_events';

export class Sequencer {
  /** When the oldest kick not yet taken by a batch arrived (the sequencing lag metric). */
  private pendingSince: number | undefined;
  private readonly loop = new Loop(
    async () => (await this.sequenceBatch()) === BATCH,
    (err) => this.deps.log.error({ err }, 'event sequencer failed; the periodic sweep will retry'),
  );

  constructor(
    private readonly deps: Pick<Deps, 'db' | 'log' | 'metrics'>,
    private readonly ports: SequencerPorts,
  ) {}

  /** Periodic backstop: picks up rows another process committed but could not sequence (it crashed). */
  start(intervalMs = 500): void {
    this.loop.start(intervalMs, () => void this.sweep());
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  kick(): void {
    this.pendingSince ??= performance.now();
    this.loop.kick();
  }

  /** Resolves once everything committed before the call is sequenced (tests and benchmarks). */
  flush(): Promise<void> {
    return this.loop.flush();
  }

  private async sweep(): Promise<void> {
    if (this.loop.busy) return;
    if (await hasUnsequenced(this.deps.db.sql).catch(() => false)) this.kick();
  }

  /**
   * One round trip on the SQL port: BEGIN, the lock, the numbering with its
   * NOTIFY (PostgreSQL only; embedded mode is one process), and, when this
   * process's live stream would read now, its read past its cursor (the
   * batch's own rows included, as this transaction sees them; handed over
   * only after the commit), COMMIT. The stream then needs no round trip of
   * its own for what this process sequenced.
   */
  private async sequenceBatch(): Promise<number> {
    const { db, metrics } = this.deps;
    const since = this.pendingSince;
    this.pendingSince = undefined;
    const after = this.ports.readFrom?.();
    const statements = [
      ...sequenceStatements({ lockKey: SEQUENCER_LOCK_KEY, channel: EVENTS_CHANNEL, batch: BATCH, notify: db.kind === 'postgres' }),
      ...(after === undefined ? [] : [streamPullSql(after)]),
    ];
    this.ports.onBatchStart?.();
    try {
      const [, batch, read] = await db.sql.transaction((send) => send(statements, { commit: true }));
      const row = batch?.[0];
      const n = Number(row?.n ?? 0);
      if (n > 0 && metrics) {
        metrics.eventsAppended.inc(n);
        if (since !== undefined) metrics.sequencingLag.observe((performance.now() - since) / 1000);
      }
      if (n > 0 && row?.max != null)
        this.ports.onSequenced(
          BigInt(row.max as string),
          after === undefined ? undefined : { after, rows: read as unknown as StreamRow[] },
        );
      return n;
    } finally {
      this.ports.onBatchEnd?.();
    }
  }
}
