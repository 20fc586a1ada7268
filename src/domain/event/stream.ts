import { Repeater } from 'graphql-yoga';
import type { Deps } from '../context.ts';
import { DomainError } from '../errors.ts';
import { latestSeq, maxPositionStatement, pageEvents, presentEvent, streamPullStatement, type PublicEvent, type StreamRow } from './event.ts';
import { EVENTS_CHANNEL } from './sequencer.ts';
import { isPublicEventType } from './types.ts';
import type { EventFilter } from './filter.ts';
import { PgListener } from '../listener.ts';

/**
 * This process's view of the live log. It tails the whole table by the
 * internal global `position` (one prepared statement on the SQL port per
 * sequenced batch, whatever the number of subscribers) and hands each
 * event to the subscribers of its organization. It is woken by the local
 * sequencer, by PostgreSQL NOTIFY from other processes, and by a slow timer
 * as a backstop for a lost notification. Its LISTEN connection also tells
 * the process when another one sequenced events (`onNotified`, the batch's
 * highest position): a worker process that serves no stream only listens
 * (`start({ tail: false })`) and wakes its webhook fan-out from it.
 */
type Listener = (e: StreamRow, seq: bigint) => void;
const PULL = 1000;

export class EventStream {
  private lastPosition = 0n;
  private listeners = new Map<string, Set<Listener>>();
  private pulling = false;
  private pullAgain = false;
  private readonly listener: PgListener;
  private timer: NodeJS.Timeout | undefined;
  /** Ends each open subscription (with an error); emptied on shutdown. */
  private readonly open = new Set<(err: unknown) => void>();
  private closed = false;
  /** Off until start(), and for good with `tail: false`: pull() is then a no-op, never a read from position 0. */
  private tailing = false;

  constructor(
    private readonly deps: Omit<Deps, 'sequencer'>,
    /** Called on each NOTIFY (its own process's included) with the sequenced batch's highest position. */
    private readonly onNotified: (position: bigint) => void = () => {},
  ) {
    this.listener = new PgListener(deps, EVENTS_CHANNEL, {
      notify: (payload) => {
        if (/^\d+$/.test(payload)) this.onNotified(BigInt(payload));
        this.pull();
      },
      // Every (re)connect pulls at once: what was sequenced while the connection was down is read now.
      up: () => this.pull(),
    });
  }

  /** `tail: false`: LISTEN only, for `onNotified`; the stream serves no subscriber and never pulls. */
  async start({ tail = true }: { tail?: boolean } = {}): Promise<void> {
    if (tail) {
      const [max] = await this.deps.db.sql.rows(maxPositionStatement, []);
      this.lastPosition = BigInt(max?.max ?? 0);
      this.tailing = true;
    }
    if (this.deps.db.kind === 'postgres') await this.listener.start();
    if (!tail) return;
    this.timer = setInterval(() => this.pull(), this.deps.config.eventStreamPollMs);
    this.timer.unref();
  }

  /**
   * Ends every open subscription with `service_unavailable` (clients resume
   * elsewhere with startingAfter) and refuses new ones. Call it before
   * closing the HTTP server: an open SSE response otherwise holds
   * `server.close()` until the shutdown grace period runs out.
   */
  endSubscriptions(): void {
    this.closed = true;
    const err = new DomainError('service_unavailable', 'The server is shutting down; resubscribe with startingAfter set to the last seq received');
    for (const end of [...this.open]) end(err);
  }

  async stop(): Promise<void> {
    this.endSubscriptions();
    clearInterval(this.timer);
    await this.listener.stop();
    this.listeners.clear();
  }

  /** Fetches newly sequenced events and dispatches them; calls coalesce. */
  pull(): void {
    if (!this.tailing) return;
    if (this.pulling) {
      this.pullAgain = true;
      return;
    }
    this.pulling = true;
    void (async () => {
      try {
        do {
          this.pullAgain = false;
          const rows = await this.deps.db.sql.rows(streamPullStatement, [String(this.lastPosition), PULL]);
          for (const row of rows) {
            this.lastPosition = BigInt(row.position);
            if (!isPublicEventType(row.type)) continue;
            const listeners = this.listeners.get(row.organizationId);
            if (!listeners) continue;
            const seq = BigInt(row.seq!);
            for (const l of listeners) l(row, seq);
          }
          if (rows.length === PULL) this.pullAgain = true;
        } while (this.pullAgain);
      } catch (err) {
        this.deps.log.warn({ err }, 'event stream pull failed; retrying on the next wake-up');
      } finally {
        this.pulling = false;
      }
    })();
  }

  private listen(organizationId: string, l: Listener): () => void {
    let set = this.listeners.get(organizationId);
    if (!set) this.listeners.set(organizationId, (set = new Set()));
    set.add(l);
    return () => {
      set.delete(l);
      if (set.size === 0 && this.listeners.get(organizationId) === set) this.listeners.delete(organizationId);
    };
  }

  get subscriberCount(): number {
    let n = 0;
    for (const s of this.listeners.values()) n += s.size;
    return n;
  }

  /**
   * Replays the feed after `startingAfter` (or from now), then streams live
   * events, in seq order with no gap or duplicate at the seam: the live
   * listener is registered before the replay query runs, live events are held
   * until the replay ends, and anything at or below the last replayed seq is
   * dropped. A subscriber that falls more than `maxPending` events behind
   * (events handed to it that its connection has not taken yet) is ended
   * rather than buffered without bound: it still receives what was queued,
   * then `subscriber_too_slow` with `last_seq`, the last seq queued for it,
   * so it resumes with `startingAfter`. Its listener is released at once;
   * other subscribers never wait on it (each has its own queue).
   */
  subscribe(
    organizationId: string,
    opts: { filter?: EventFilter; startingAfter?: bigint; maxPending?: number },
  ): AsyncIterableIterator<PublicEvent> {
    const maxPending = opts.maxPending ?? this.deps.config.streamMaxPending;
    return new Repeater<PublicEvent>(async (push, stop) => {
      if (this.closed) {
        stop(new DomainError('service_unavailable', 'The server is shutting down; resubscribe with startingAfter set to the last seq received'));
        return;
      }
      const end = (err: unknown) => stop(err);
      this.open.add(end);
      let last = 0n;
      let replaying = true;
      let pending = 0;
      let queued: string | undefined;
      const held: [StreamRow, bigint][] = [];
      const deliver = (e: StreamRow, seq: bigint) => {
        if (seq <= last) return;
        last = seq;
        if (opts.filter && !opts.filter.matches(e)) return;
        if (++pending > maxPending) {
          const lastSeq = queued ?? String(opts.startingAfter ?? '');
          stop(
            new DomainError('subscriber_too_slow', `The subscriber fell more than ${maxPending} events behind; resubscribe with startingAfter set to the last seq received (${lastSeq} was the last sent)`, null, {
              last_seq: lastSeq,
            }),
          );
          unlisten();
          return;
        }
        queued = String(seq);
        // A push settles when consumed, or rejects when the stream ended meanwhile (nothing to do then).
        push(presentEvent(e)).then(
          () => pending--,
          () => {},
        );
      };
      const unlisten = this.listen(organizationId, (e, seq) => (replaying ? held.push([e, seq]) : deliver(e, seq)));
      // A subscriber that leaves mid-replay releases its listener now, not after paging through the rest of the feed.
      let stopped = false;
      void stop.then(() => (stopped = true));
      try {
        last = opts.startingAfter ?? (await latestSeq(this.deps as Deps, organizationId));
        while (!stopped) {
          const page = await pageEvents(this.deps as Deps, organizationId, { after: last, limit: 100, filter: opts.filter });
          for (const e of page.data) {
            if (stopped) break;
            last = BigInt(e.seq);
            await push(e);
          }
          if (!page.has_more) break;
        }
        replaying = false;
        for (const [e, seq] of held.splice(0)) deliver(e, seq);
      } catch (err) {
        stop(err);
      }
      await stop;
      unlisten();
      this.open.delete(end);
    });
  }
}
