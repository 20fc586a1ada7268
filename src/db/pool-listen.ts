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
 * Every connection of `pool` LISTENs on `channel` from its first checkout on, so the pool's own statements prove
 * that notifications have arrived, which otherwise takes a round trip of its own on a dedicated connection
 * (src/runtime/credential-cache.ts).
 *
 * The proof: PostgreSQL sends a listening session every notification committed before a statement it ran outside a
 * transaction before that statement's ReadyForQuery (within a transaction, at the end of it, before the
 * ReadyForQuery that says the session is idle again), and node-postgres emits each one before it reads that
 * ReadyForQuery. node-postgres sends a connection's next statement (or batch: sql-port.ts sends a batch with one
 * Sync) only after the previous ReadyForQuery, and its user only after checking the connection out. So when a
 * ReadyForQuery that says idle arrives, every notification committed before the later of the previous
 * ReadyForQuery and the checkout has arrived. The ReadyForQuery's time is taken in a listener placed before the
 * driver's own, which sends the next statement. A connection counts from the ReadyForQuery of its LISTEN on (the
 * LISTEN has then committed); a connection in node-postgres's pipeline mode never counts.
 *
 * Not for a pool behind a transaction pooler: a LISTEN there holds nothing (the caller does not call it then).
 */
export function listenOnPool(pool: pg.Pool, channel: string, listener: PoolListener): void {
  /** Per connection: the time its next statement is known to be sent after. */
  const since = new WeakMap<object, { at: number | undefined }>();
  const listen = `LISTEN "${channel.replaceAll('"', '""')}"`;
  let failed = false; // a LISTEN refused anywhere: nothing is proven by the pool from then on
  pool.on('acquire', (pooled) => {
    const known = since.get(pooled);
    if (known) {
      if (known.at !== undefined) known.at = performance.now();
      return;
    }
    const readSince: { at: number | undefined } = { at: undefined };
    since.set(pooled, readSince);
    const client = pooled as unknown as ListeningClient;
    let listening = false;
    let listenSent = true;
    client.on('notification', (msg) => {
      if (msg.channel === channel) listener.notify();
    });
    client.connection.prependListener('readyForQuery', (msg) => {
      const now = performance.now();
      if (listenSent) {
        // The LISTEN's own ReadyForQuery (the connection was idle when checked out, so the LISTEN went first).
        listenSent = false;
        listening = msg.status === 'I';
      } else if (listening && !failed && !client.pipeline && msg.status === 'I' && readSince.at !== undefined) {
        listener.delivered(readSince.at);
      }
      readSince.at = now;
    });
    client.query(listen).catch(() => {
      failed = true;
    });
  });
}
