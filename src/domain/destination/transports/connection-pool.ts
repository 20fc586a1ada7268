/**
 * One broker connection per distinct URL (credentials included) and CA per
 * process, shared by every destination that names it, opened on first use.
 *
 * Broker clients never reconnect by themselves here (their own reconnect
 * would skip the network policy and could follow addresses the broker
 * advertises): a connection that breaks is dropped, and the next publish
 * opens a new one through `open`, which resolves and checks the address
 * again. Failed opens back off exponentially (BACKOFF_MS doubling up to
 * BACKOFF_MAX_MS); while backing off, a publish whose deadline reaches the
 * next try waits for it, and one that does not fails at once with the last
 * reason, so an outage costs one connect per backoff step, not one per
 * message. A connection unused for `idleMs` with nothing in flight is closed.
 *
 * Liveness is not left to the client's close event alone: a use that has no
 * answer by its deadline drops its connection (the next use opens a new one),
 * and an open that has not settled within CONNECT_TIMEOUT_MS is abandoned, so
 * a connection wedged in a state its client never reports (a CI run saw a
 * RabbitMQ destination time out for minutes after its broker came back) heals
 * at the next attempt.
 */
export const BACKOFF_MS = 100;
export const BACKOFF_MAX_MS = 5000;
/** How long an opening connection may take before it is abandoned (a publish's own deadline is usually shorter). */
export const CONNECT_TIMEOUT_MS = 10_000;
export const IDLE_MS = 3 * 60_000;

/** An error raised while opening a connection (its cause is the broker's or the socket's reason). */
export class ConnectFailure extends Error {
  constructor(readonly cause: unknown) {
    super(String((cause as Error)?.message ?? cause));
  }
}

export interface Connection {
  /** False once the broker or the socket closed it (sometimes known before the close event arrives). */
  isOpen(): boolean;
  close(): Promise<void>;
}

interface Entry<C extends Connection> {
  conn: C | null;
  opening: Promise<C> | null;
  failures: number;
  retryAt: number;
  lastError: Error | null;
  inFlight: number;
  lastUsed: number;
}

export class ConnectionPool<C extends Connection> {
  private readonly entries = new Map<string, Entry<C>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly idleMs = IDLE_MS,
    private readonly connectTimeoutMs = CONNECT_TIMEOUT_MS,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(idleMs / 2, 30_000));
    this.sweeper.unref();
  }

  /** Runs `use` on the connection for `key`, opening it first (by `open`) when there is none. */
  async with<T>(key: string, deadline: number, open: () => Promise<C>, use: (conn: C) => Promise<T>): Promise<T> {
    const entry = this.entry(key);
    entry.inFlight++;
    try {
      let conn: C;
      try {
        conn = await this.acquire(key, entry, deadline, open);
      } catch (e) {
        throw new ConnectFailure(e);
      }
      return await this.answered(key, conn, deadline, use(conn));
    } finally {
      entry.inFlight--;
      entry.lastUsed = Date.now();
    }
  }

  /** `work`'s outcome; if its deadline passes first, its connection is dropped (the caller's own timeout answers). */
  private answered<T>(key: string, conn: C, deadline: number, work: Promise<T>): Promise<T> {
    const timer = setTimeout(
      () => this.broken(key, conn, new Error('no answer on this connection within the attempt')),
      Math.max(0, deadline - Date.now()),
    );
    timer.unref();
    return work.finally(() => clearTimeout(timer));
  }

  /** `open()`, abandoned after `connectTimeoutMs`; a connection that opens after that is closed. */
  private bounded(open: () => Promise<C>): Promise<C> {
    const opening = open();
    let timer: NodeJS.Timeout | undefined;
    const given = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new Error(`no connection within ${this.connectTimeoutMs} ms`));
        opening.then(
          (late) => void late.close().catch(() => {}),
          () => {},
        );
      }, this.connectTimeoutMs);
    });
    return Promise.race([opening, given]).finally(() => clearTimeout(timer));
  }

  /** The connection broke (closed by the broker, socket error): forget it so the next use opens a new one. */
  broken(key: string, conn: C, error: Error): void {
    const entry = this.entries.get(key);
    if (!entry || entry.conn !== conn) return;
    entry.conn = null;
    entry.lastError = error;
    void conn.close().catch(() => {});
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    const entries = [...this.entries.values()];
    this.entries.clear();
    // A connection still opening is closed by `acquire` once it opens, since its entry is gone.
    await Promise.all(entries.map((e) => e.conn?.close().catch(() => {})));
  }

  private entry(key: string): Entry<C> {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { conn: null, opening: null, failures: 0, retryAt: 0, lastError: null, inFlight: 0, lastUsed: Date.now() };
      this.entries.set(key, entry);
    }
    return entry;
  }

  private async acquire(key: string, entry: Entry<C>, deadline: number, open: () => Promise<C>): Promise<C> {
    if (entry.conn?.isOpen()) return entry.conn;
    if (entry.conn) this.broken(key, entry.conn, new Error('connection closed'));
    if (entry.opening) return entry.opening;
    const wait = entry.retryAt - Date.now();
    if (wait > 0) {
      if (Date.now() + wait >= deadline) throw entry.lastError ?? new Error('reconnecting');
      await new Promise((r) => setTimeout(r, wait));
      if (entry.conn?.isOpen()) return entry.conn;
      if (entry.opening) return entry.opening;
    }
    entry.opening = this.bounded(open).then(
      (conn) => {
        entry.opening = null;
        entry.failures = 0;
        entry.retryAt = 0;
        // closeAll ran meanwhile: nobody will close this one later.
        if (this.entries.get(key) !== entry) void conn.close().catch(() => {});
        else entry.conn = conn;
        return conn;
      },
      (e: Error) => {
        entry.opening = null;
        entry.failures++;
        entry.lastError = e;
        entry.retryAt = Date.now() + Math.min(BACKOFF_MS * 2 ** (entry.failures - 1), BACKOFF_MAX_MS);
        throw e;
      },
    );
    return entry.opening;
  }

  private sweep(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const [key, e] of this.entries) {
      if (e.inFlight > 0 || e.opening || e.lastUsed > cutoff) continue;
      this.entries.delete(key);
      void e.conn?.close().catch(() => {});
    }
  }
}
