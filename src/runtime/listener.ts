import pg from 'pg';
import type { Deps } from '../domain/context.ts';

/**
 * One PostgreSQL LISTEN connection on one channel, kept open: a dedicated
 * client (a pooled one would be handed to other queries), reconnected a
 * second after it is lost, for as long as the owner runs. NOTIFY sent inside
 * a transaction is delivered to every listener at commit; a notification
 * sent while this connection was down is lost, so every user has a backstop
 * (the credential cache trusts nothing while down, the event stream and the
 * operations worker poll) and `up` runs on every (re)connect so the user can
 * catch up at once. Embedded PGlite is one process: nothing listens there.
 */
export interface ListenHooks {
  notify(payload: string): void;
  /** Connected and listening (also after a reconnect): anything sent while down was missed. */
  up?(client: pg.Client): void;
  /** The connection was lost or could not be made (not called on stop). */
  down?(err?: unknown): void;
}

export class PgListener {
  private current: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly deps: Pick<Deps, 'config' | 'log'>,
    private readonly channel: string,
    private readonly hooks: ListenHooks,
  ) {}

  /** The listening client, while connected. */
  get client(): pg.Client | undefined {
    return this.current;
  }

  /** Connects (once; failures retry in the background): resolves when listening or when the first attempt failed. */
  async start(): Promise<void> {
    if (this.deps.config.databaseUrl) await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.current;
    this.current = undefined;
    await client?.end().catch(() => {});
  }

  private later(): void {
    if (this.stopped) return;
    this.retry = setTimeout(() => void this.connect(), 1000);
    this.retry.unref();
  }

  private async connect(): Promise<void> {
    // PostgreSQL itself: a LISTEN needs its session kept, which a transaction pooler in front of the pool does not do.
    const client = new pg.Client({ connectionString: this.deps.config.databaseDirectUrl ?? this.deps.config.databaseUrl });
    const lost = (err?: unknown) => {
      if (this.current !== client) return;
      this.current = undefined;
      if (this.stopped) return;
      this.deps.log.warn({ err, channel: this.channel }, 'LISTEN connection lost; reconnecting');
      this.hooks.down?.(err);
      this.later();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (n) => {
      if (n.channel === this.channel) this.hooks.notify(n.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      await client.end().catch(() => {});
      this.deps.log.warn({ err, channel: this.channel }, 'LISTEN failed; retrying');
      this.hooks.down?.(err);
      this.later();
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => {});
      return;
    }
    this.current = client;
    this.hooks.up?.(client);
  }
}
