import type { Deps } from '../domain/context.ts';
import { DEFAULT_STREAM_BATCH_SUBSCRIBERS } from '../config.ts';
import { DomainError } from '../domain/errors.ts';
import { latestSeq, pageEvents, presentEvent, type PublicEvent } from '../domain/event/event.ts';
import { maxPosition, pullSequenced, STREAM_PULL_LIMIT as PULL, type StreamRow } from '../domain/event/store.ts';
import { EVENTS_CHANNEL } from './sequencer.ts';
import { isPublicEventType } from '../domain/event/types.ts';
import { ALL_EVENTS, type EventFilter } from '../domain/event/filter.ts';
import { PgListener } from './listener.ts';
import { Loop } from './loop.ts';

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
 *
 * Fan-out is multiplexed: subscribers are grouped by organization, filter
 * (its canonical key) and view (`StreamView.key`: what else shapes the
 * payload, such as a GraphQL document, its variables and the caller's
 * authorization scope), and each event of a pull is matched and rendered
 * once per group; every member gets the same payload. Everything else stays
 * per subscriber: its replay, its seam, its backpressure and its end.
 */

/**
 * How a transport takes events without an iterator per subscriber: the
 * stream renders each event once per `key` (subscribers with equal keys,
 * organization and filter share the payload, so the key must cover
 * everything that changes it: document, variables, authorization scope) and
 * writes it to each subscriber's sink. `done` runs when the transport has
 * taken the write (the unit of backpressure).
 */
export interface StreamView<P> {
  readonly key: string;
  render(e: PublicEvent): P | Promise<P>;
}
export interface StreamSink<P> {
  write(payload: P, seq: string, done: () => void): void;
}
/**
 * Ends a subscription from outside (its access ended): called once with the
 * subscription's `end`, it returns how to stop watching, which the
 * subscription calls when it ends on its own.
 */
export type StreamUntil = (end: (err: unknown) => void) => () => void;

/** Subscribers of one organization with equal filter and view keys; its members use its filter and view (idle memory). */
interface Group {
  readonly organizationId: string;
  readonly key: string;
  readonly filter: EventFilter;
  readonly view: StreamView<unknown>;
  readonly members: Set<Subscription<unknown>>;
}

/** The iterator subscribers' view: the presented event itself, shared by every member of the (organization, filter). */
const OBJECTS: StreamView<PublicEvent> = { key: '\u0000object', render: (e) => e };

/** Where a subscription starts and how far it may fall behind: the options every form of `subscribe` takes. */
export interface SubscribeOptions {
  filter?: EventFilter;
  startingAfter?: bigint;
  maxPending?: number;
}

export class EventStream {
  private lastPosition = 0n;
  /** The highest wake-up that arrived while this process's sequencer had a batch in flight. */
  private heldUpTo: bigint | undefined;
  /** What this process's sequencer read past `after` for the stream, until a pull takes it. */
  private inHand: { after: bigint; rows: StreamRow[] } | undefined;
  /** A read of the stream's own is in flight (the cursor moves when it returns). */
  private reading = false;
  /** The highest position a wake-up named: a pull that ends below it pulls again. */
  private wanted = 0n;
  /** A wake-up that named no position (the poll, a reconnect): only a read of the stream's own answers it. */
  private mustRead = false;
  /** Pulls so far: reads of its own, and batches the sequencer read for it (`sequenced`). For tests and diagnostics. */
  readonly pulls = { read: 0, inHand: 0 };
  /** Organization → group key (filter and view) → its subscribers. */
  private readonly groups = new Map<string, Map<string, Group>>();
  /** Pulls, coalesced; a pass inside the batch window only sets a wake-up for its end. The poll is the backstop. */
  private readonly loop = new Loop(
    () => this.pass(),
    (err) => this.deps.log.warn({ err }, 'event stream pull failed; retrying on the next wake-up'),
  );
  /** The batch window holds the next pull back (a wake-up is set for its end). */
  private held = false;
  /** This process's sequencer has a batch in flight (its ports hand the batch over, or `sequencerIdle` wakes). */
  private sequencing = false;
  private readonly listener: PgListener;
  private lastPullAt = -Infinity;
  /** Every open subscription, ended (with an error) on shutdown. */
  private readonly open = new Set<Subscription<unknown>>();
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
        const position = /^\d+$/.test(payload) ? BigInt(payload) : undefined;
        if (position !== undefined) this.onNotified(position);
        // While this process sequences a batch, a NOTIFY (its own, which can arrive before its commit is acknowledged,
        // or another process's, whose rows the batch's own read sees) waits for the batch's end.
        if (position !== undefined && this.sequencing) {
          if (this.heldUpTo === undefined || position > this.heldUpTo) this.heldUpTo = position;
          return;
        }
        this.pull(position);
      },
      // Every (re)connect pulls at once: what was sequenced while the connection was down is read now.
      up: () => this.pull(),
    });
  }

  /** `tail: false`: LISTEN only, for `onNotified`; the stream serves no subscriber and never pulls. */
  async start({ tail = true }: { tail?: boolean } = {}): Promise<void> {
    if (tail) {
      this.lastPosition = BigInt((await maxPosition(this.deps.db.sql)) ?? 0);
      this.tailing = true;
    }
    if (this.deps.db.kind === 'postgres') await this.listener.start();
    if (!tail) return;
    this.loop.start(this.deps.config.eventStreamPollMs, () => this.pull());
  }

  /**
   * Ends every open subscription with `service_unavailable` (clients resume
   * elsewhere with startingAfter) and refuses new ones. Call it before
   * closing the HTTP server: an open SSE response otherwise holds
   * `server.close()` until the shutdown grace period runs out.
   */
  endSubscriptions(): void {
    this.closed = true;
    for (const sub of [...this.open]) sub.end(shuttingDown());
  }

  async stop(): Promise<void> {
    this.endSubscriptions();
    this.tailing = false;
    await this.loop.stop();
    this.held = false;
    await this.listener.stop();
    this.groups.clear();
  }

  /**
   * Fetches newly sequenced events and dispatches them; calls coalesce. Two
   * pulls start at least `eventStreamBatchMs` apart: a quiet stream pulls at
   * once, a busy one in batches (each subscriber's socket is written once per
   * batch, corked), which bounds the writes per second whatever the rate.
   * With no subscriber in this process nothing is read: a wake-up that says
   * how far the log is sequenced (`upTo`, a batch's highest position) only
   * moves the cursor there, since a subscriber that joins later replays from
   * the feed everything sequenced before it joined; one that says no more than
   * what was read already starts no read (numbers become visible in order).
   */
  pull(upTo?: bigint): void {
    if (!this.tailing) return;
    if (this.groups.size === 0 && !this.loop.busy) {
      if (upTo !== undefined && upTo > this.lastPosition) this.lastPosition = upTo;
      this.inHand = undefined;
      return;
    }
    if (upTo === undefined) this.mustRead = true;
    // Already read that far (the sequencing process hears its own NOTIFY after it pulled the batch): nothing to read.
    else if (upTo <= this.lastPosition) return;
    else if (upTo > this.wanted) this.wanted = upTo;
    this.loop.kick();
  }

  /** Neither pulling nor waiting out a batch window (for tests). */
  get atRest(): boolean {
    return !this.loop.busy && !this.held;
  }

  /** A pull, once the batch window since the last one has passed (else a wake-up at its end); true: pull again now. */
  private async pass(): Promise<boolean> {
    if (!this.tailing) return false;
    const wait = this.lastPullAt + this.batchWindowMs() - performance.now();
    if (wait > 0) {
      this.held = true;
      this.loop.wakeIn(wait);
      return false;
    }
    this.held = false;
    return this.read();
  }

  /**
   * Where this process's sequencer should read for the stream in the batch
   * it is about to number (`streamPullSql`, the pull's own statement, in the
   * same round trip): the cursor, when the stream has subscribers and would
   * take the rows when they come; otherwise undefined. Not while a read of
   * its own is in flight (it will move the cursor), nor while the batch
   * window holds a pull back or rows already wait for it: a busy stream
   * reads once per window, as before, rather than once per batch.
   */
  readFrom(): bigint | undefined {
    const takes = this.tailing && this.groups.size > 0 && !this.reading && !this.held && !this.inHand;
    return takes ? this.lastPosition : undefined;
  }

  /**
   * A batch this process sequenced, with everything its transaction read
   * past `after` (the batch included; handed over after the commit). When
   * the cursor is still there it stands in for the stream's next read (kept
   * until the batch window allows one); otherwise it is a wake-up up to `max`.
   */
  sequenced(max: bigint, after: bigint, rows: StreamRow[]): void {
    if (!this.tailing || this.groups.size === 0 || after !== this.lastPosition) {
      this.pull(max);
      return;
    }
    this.inHand = { after, rows };
    this.loop.kick();
  }

  /** This process's sequencer started a batch: a NOTIFY meanwhile waits for its end (`sequencerIdle`). */
  sequencerBusy(): void {
    this.sequencing = true;
  }

  /** This process's sequencer ended a batch (after handing it over, or failing): a wake-up held meanwhile goes now. */
  sequencerIdle(): void {
    this.sequencing = false;
    const upTo = this.heldUpTo;
    this.heldUpTo = undefined;
    if (upTo !== undefined) this.pull(upTo);
  }

  /**
   * One pull: the sequencer's read when it is in hand (its rows past the
   * cursor: a read that moved the cursor since took a prefix of them), else
   * a read of the stream's own; then the dispatch, and another pull if a
   * wake-up asked for more than this one covered.
   */
  private async read(): Promise<boolean> {
    this.lastPullAt = performance.now();
    const hand = this.inHand;
    this.inHand = undefined;
    const from = this.lastPosition;
    // The cursor only moves forward, so the rows past it are the tail of the sequencer's read (all of it, usually).
    const inHand = hand?.rows.filter((r) => BigInt(r.position) > from);
    if (inHand) this.pulls.inHand++;
    else {
      this.pulls.read++;
      this.reading = true;
      // A read of its own answers every wake-up that came before it (what they named was committed by then).
      this.mustRead = false;
      this.wanted = 0n;
    }
    let again = false;
    try {
      const rows = inHand ?? (await pullSequenced(this.deps.db.sql, from, PULL));
      this.reading = false;
      if (rows.length) {
        this.lastPosition = BigInt(rows.at(-1)!.position);
        await this.dispatch(rows);
      }
      // A full page: more is waiting now (catching up), no reason to wait for the batch window.
      if ((hand?.rows ?? rows).length === PULL) {
        this.lastPullAt = -Infinity;
        again = true;
      }
    } catch (err) {
      this.deps.log.warn({ err }, 'event stream pull failed; retrying on the next wake-up');
    } finally {
      this.reading = false;
    }
    return again || this.mustRead || this.wanted > this.lastPosition || this.inHand !== undefined;
  }

  /**
   * One pull's events to their groups: each event is presented once, matched
   * and rendered once per group, and written to the members in seq order,
   * all in one turn (a transport corks its socket across it).
   */
  private async dispatch(rows: StreamRow[]): Promise<void> {
    const out: [Group, unknown, bigint][] = [];
    let async = false;
    for (const row of rows) {
      if (!isPublicEventType(row.type)) continue;
      const groups = this.groups.get(row.organizationId);
      if (!groups) continue;
      let event: PublicEvent | undefined;
      for (const g of groups.values()) {
        if (!g.filter.matches(row)) continue;
        let payload: unknown;
        try {
          payload = g.view.render((event ??= presentEvent(row)));
          if (isPromiseLike(payload)) async = true;
        } catch (err) {
          payload = this.renderFailed(err);
        }
        out.push([g, payload, BigInt(row.seq!)]);
      }
    }
    if (async) {
      const settled = await Promise.allSettled(out.map((d) => d[1]));
      for (const [i, s] of settled.entries()) out[i]![1] = s.status === 'fulfilled' ? s.value : this.renderFailed(s.reason);
    }
    for (const [g, payload, seq] of out) {
      if (payload instanceof DomainError) for (const m of [...g.members]) m.end(payload);
      else for (const m of g.members) m.take(payload, seq);
    }
  }

  /** @internal A render that failed is a fault: logged, and its subscribers end with internal_error (they resume with startingAfter). */
  renderFailed(err: unknown): DomainError {
    this.deps.log.error({ err }, 'event stream: rendering an event failed');
    return new DomainError('internal_error', 'An event could not be rendered; resubscribe with startingAfter set to the last seq received');
  }

  /**
   * @internal Adds a subscriber to its group (before its replay, so nothing committed meanwhile is missed). The
   * subscriber then uses the group's filter and view (equal keys: the same events and payloads), letting its own go.
   */
  join(sub: Subscription<unknown>, organizationId: string, filter: EventFilter, view: StreamView<unknown>): Group {
    let groups = this.groups.get(organizationId);
    if (!groups) this.groups.set(organizationId, (groups = new Map()));
    const key = `${filter.key}\u0000${view.key}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { organizationId, key, filter, view, members: new Set() }));
    g.members.add(sub);
    this.open.add(sub);
    return g;
  }

  /** @internal */
  leave(sub: Subscription<unknown>, group: Group): void {
    this.open.delete(sub);
    group.members.delete(sub);
    if (group.members.size) return;
    const groups = this.groups.get(group.organizationId);
    if (groups?.get(group.key) === group) groups.delete(group.key);
    if (groups?.size === 0) this.groups.delete(group.organizationId);
  }

  /** @internal */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * The least time between two pulls: EVENT_STREAM_BATCH_MS once EVENT_STREAM_BATCH_SUBSCRIBERS listen, proportionally
   * less below (8 subscribers of 256: 1.25 ms). Batching saves one socket write per subscriber per event, which is worth
   * its latency only when there are many sockets to write.
   */
  private batchWindowMs(): number {
    const { eventStreamBatchMs: ms, eventStreamBatchSubscribers: full = DEFAULT_STREAM_BATCH_SUBSCRIBERS } = this.deps.config;
    return ms * Math.min(1, this.subscriberCount / full);
  }

  get subscriberCount(): number {
    let n = 0;
    for (const groups of this.groups.values()) for (const g of groups.values()) n += g.members.size;
    return n;
  }

  /** Distinct (organization, filter, view) groups: what one event is rendered for at most (for tests and metrics). */
  get groupCount(): number {
    let n = 0;
    for (const groups of this.groups.values()) n += groups.size;
    return n;
  }

  /**
   * Replays the feed after `startingAfter` (or from now), then streams live
   * events, in seq order with no gap or duplicate at the seam: the subscriber
   * joins its group before the replay query runs, live events are held
   * until the replay ends, and anything at or below the last replayed seq is
   * dropped. A subscriber that falls more than `maxPending` events behind
   * (events handed to it that its connection has not taken yet) is ended
   * rather than buffered without bound: it still receives what was queued,
   * then `subscriber_too_slow` with `last_seq`, the last seq queued for it,
   * so it resumes with `startingAfter`. It leaves its group at once; other
   * subscribers never wait on it (each has its own queue or sink).
   *
   * Without `sink`, the iterator yields the events. With `sink` (and its
   * `view`), events are rendered once per group and written to the sink; the
   * iterator then yields nothing and only tells the end: done when returned,
   * or the error that ended the subscription.
   */
  subscribe(organizationId: string, opts: SubscribeOptions): AsyncIterableIterator<PublicEvent>;
  subscribe<P>(
    organizationId: string,
    opts: SubscribeOptions & { view: StreamView<P>; sink: StreamSink<P>; until?: StreamUntil },
  ): AsyncIterableIterator<never>;
  subscribe<P>(
    organizationId: string,
    opts: SubscribeOptions & { view?: StreamView<P>; sink?: StreamSink<P>; until?: StreamUntil },
  ): AsyncIterableIterator<unknown> {
    const sub = new Subscription<unknown>(
      this,
      this.deps as Deps,
      organizationId,
      opts.filter ?? ALL_EVENTS,
      opts.startingAfter,
      opts.maxPending ?? this.deps.config.streamMaxPending,
      (opts.view ?? OBJECTS) as StreamView<unknown>,
      opts.sink as StreamSink<unknown> | undefined,
    );
    if (opts.until) sub.watch(opts.until);
    return sub;
  }
}

const isPromiseLike = (x: unknown): x is PromiseLike<unknown> => typeof (x as { then?: unknown } | null)?.then === 'function';

const shuttingDown = () =>
  new DomainError('service_unavailable', 'The server is shutting down; resubscribe with startingAfter set to the last seq received');

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * One subscriber: a small iterator rather than a chain of them, since
 * thousands sit idle. It starts on the first `next()` (joins its group,
 * replays, goes live). Iterator subscribers queue events until taken; sink
 * subscribers write them at once and count writes not yet taken.
 */
class Subscription<P> implements AsyncIterableIterator<unknown> {
  /** Its group, from the start until it ends. */
  private group: Group | undefined;
  private unwatch: (() => void) | undefined;
  private started = false;
  private ended = false;
  private error: unknown;
  /** Seq of the last event handed on (live seam and replay). */
  private last = 0n;
  private replaying = true;
  private held: [P, bigint][] | undefined;
  private pending = 0;
  /** The last seq queued or written (`last_seq` when ended as too slow). */
  private queuedSeq: string | undefined;
  private queue: P[] | undefined;
  private waiter: { resolve(r: IteratorResult<unknown>): void; reject(e: unknown): void } | undefined;
  /** The sink's write callback, made on the first live write (idle subscribers never get one). */
  private taken: (() => void) | undefined;
  /** The replay waiting for its queued event to be taken. */
  private drained: (() => void) | undefined;

  constructor(
    private readonly stream: EventStream,
    private readonly deps: Deps,
    private readonly organizationId: string,
    private filter: EventFilter,
    private readonly startingAfter: bigint | undefined,
    private readonly maxPending: number,
    private view: StreamView<P>,
    private readonly sink: StreamSink<P> | undefined,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Ends with the error `until` gives it (the subscription's access ended). */
  watch(until: StreamUntil): void {
    this.unwatch = until((err) => this.end(err));
  }

  next(): Promise<IteratorResult<unknown>> {
    if (!this.started) {
      this.started = true;
      if (this.stream.isClosed) this.end(shuttingDown());
      else void this.begin();
    }
    const value = this.queue?.shift();
    if (value !== undefined) {
      this.pending--;
      if (this.drained && !this.queue!.length) this.release();
      return Promise.resolve({ done: false, value });
    }
    if (this.ended) return this.finish();
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  return(): Promise<IteratorResult<unknown>> {
    this.queue = undefined;
    this.end(undefined);
    return Promise.resolve(DONE);
  }

  throw(err: unknown): Promise<IteratorResult<unknown>> {
    this.queue = undefined;
    this.end(undefined);
    return Promise.reject(err);
  }

  /** Ends the subscription: leaves its group; queued events are still taken, then the error (or done). */
  end(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.error = err;
    this.held = undefined;
    if (this.group) this.stream.leave(this as Subscription<unknown>, this.group);
    this.group = undefined;
    this.unwatch?.();
    this.unwatch = undefined;
    this.release();
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      this.finish().then(w.resolve, w.reject);
    }
  }

  private release(): void {
    const d = this.drained;
    this.drained = undefined;
    d?.();
  }

  private finish(): Promise<IteratorResult<unknown>> {
    const err = this.error;
    this.error = undefined;
    return err === undefined ? Promise.resolve(DONE) : Promise.reject(err);
  }

  /** A live event from the group. */
  take(payload: P, seq: bigint): void {
    if (this.replaying) (this.held ??= []).push([payload, seq]);
    else this.hand(payload, seq);
  }

  private hand(payload: P, seq: bigint): void {
    if (seq <= this.last || this.ended) return;
    this.last = seq;
    if (++this.pending > this.maxPending) {
      const lastSeq = this.queuedSeq ?? String(this.startingAfter ?? '');
      this.end(
        new DomainError(
          'subscriber_too_slow',
          `The subscriber fell more than ${this.maxPending} events behind; resubscribe with startingAfter set to the last seq received (${lastSeq} was the last sent)`,
          null,
          {
            last_seq: lastSeq,
          },
        ),
      );
      return;
    }
    this.queuedSeq = String(seq);
    if (this.sink) {
      this.sink.write(payload, this.queuedSeq, (this.taken ??= () => void this.pending--));
      return;
    }
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      this.pending--;
      w.resolve({ done: false, value: payload });
    } else (this.queue ??= []).push(payload);
  }

  /** Joins the group, replays the feed after the starting point, then releases what arrived meanwhile. */
  private async begin(): Promise<void> {
    if (this.ended) return; // returned before it started: never joins
    const group = (this.group = this.stream.join(
      this as Subscription<unknown>,
      this.organizationId,
      this.filter,
      this.view as StreamView<unknown>,
    ));
    this.filter = group.filter;
    this.view = group.view as StreamView<P>;
    const deps = this.deps;
    try {
      this.last = this.startingAfter ?? (await latestSeq(deps, this.organizationId));
      while (!this.ended) {
        const page = await pageEvents(deps, this.organizationId, { after: this.last, limit: 100, filter: this.filter });
        for (const e of page.data) {
          if (this.ended) break;
          let payload: P;
          try {
            payload = await this.view.render(e);
          } catch (err) {
            throw this.stream.renderFailed(err);
          }
          await this.replay(payload, BigInt(e.seq));
        }
        if (!page.has_more) break;
      }
      this.replaying = false;
      const held = this.held;
      this.held = undefined;
      if (held) for (const [payload, seq] of held) this.hand(payload, seq);
    } catch (err) {
      this.end(err);
    }
  }

  /** A replayed event, handed on once the previous one was taken: a replay never runs ahead of its consumer. */
  private replay(payload: P, seq: bigint): Promise<void> {
    this.last = seq;
    this.queuedSeq = String(seq);
    if (this.sink) return new Promise((resolve) => this.sink!.write(payload, this.queuedSeq!, resolve));
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w.resolve({ done: false, value: payload });
      return Promise.resolve();
    }
    (this.queue ??= []).push(payload);
    this.pending++;
    return new Promise((resolve) => (this.drained = resolve));
  }
}
