import type pg from 'pg';

export interface PoolListener {
  /** A notification on the channel, received on any of the pool's connections. */
  notify(): void;
  /**
   * Every notification on the channel committed before `asOf` (a performance.now() time) has been received (and
   * `notify` called for it): a statement on a listening connection, sent after `asOf`, has just completed outside a
   * transaction.
   */
  delivered(asOf: number): void;
}

/** A pool connection as this module sees it: its protocol connection's events and its notifications. */
interface ListeningClient {
  connection: { prependListener(event: 'readyForQuery', fn: (msg: { status: string }) => void): void };
  on(event: 'notification', fn: (msg: { channel: string }) => void): void;
  query(text: string): Promise<unknown>;
  pipeline?: boolean;
}

/**
 * Every connection `pool` opens from now on LISTENs on `channel` before its first use (pg-pool's `onConnect`, which
 * the pool awaits before handing the connection out), so the pool's own statements prove that notifications have
 * arrived, which otherwise takes a round trip of its own on a dedicated connection (src/runtime/credential-cache.ts).
 * A connection opened before, or whose LISTEN failed, proves nothing; the pool replaces idle connections in time.
 *
 * The proof: PostgreSQL sends a listening session every notification committed before a statement it ran outside a
 * transaction before that statement's ReadyForQuery (within a transaction, at the end of it, before the
 * ReadyForQuery that says the session is idle again), and node-postgres emits each one before it reads that
 * ReadyForQuery. node-postgres sends a connection's next statement (or batch: sql-port.ts sends a batch with one
 * Sync) only after the previous ReadyForQuery, and its user only after checking the connection out. So when a
 * ReadyForQuery that says idle arrives, every notification committed before the later of the previous
 * ReadyForQuery and the checkout has arrived. The ReadyForQuery's time is taken in a listener placed before the
 * driver's own, which sends the next statement. A connection in node-postgres's pipeline mode never counts.
 *
 * Not for a pool behind a transaction pooler: a LISTEN there holds nothing (the caller does not call it then).
 */
export function listenOnPool(pool: pg.Pool, channel: string, listener: PoolListener): void {
  /** Per listening connection: the time its next statement is known to be sent after. */
  const since = new WeakMap<object, { at: number }>();
  const listen = `LISTEN "${channel.replaceAll('"', '""')}"`;
  const options = pool.options as { onConnect?: (client: pg.PoolClient) => unknown };
  const before = options.onConnect;
  options.onConnect = async (pooled) => {
    await before?.(pooled);
    const client = pooled as unknown as ListeningClient;
    try {
      await client.query(listen);
    } catch {
      return; // this connection proves nothing; the statement that needed it fails or succeeds on its own
    }
    const readSince = { at: performance.now() };
    since.set(pooled, readSince);
    client.on('notification', (msg) => {
      if (msg.channel === channel) listener.notify();
    });
    client.connection.prependListener('readyForQuery', (msg) => {
      const now = performance.now();
      if (msg.status === 'I' && !client.pipeline) listener.delivered(readSince.at);
      readSince.at = now;
    });
  };
  pool.on('acquire', (pooled) => {
    const readSince = since.get(pooled);
    if (readSince) readSince.at = performance.now();
  });
}
