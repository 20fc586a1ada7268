import { Redis } from 'ioredis';
import { expandTemplate } from '../transport.ts';
import { PublishFailure, signedFields } from './attempt.ts';
import { tlsOptions } from './broker-address.ts';
import type { BrokerClient } from './broker-transport.ts';
import { CONNECT_TIMEOUT_MS, type Connection } from './connection-pool.ts';

/**
 * Redis Streams: `XADD <key> [MAXLEN ~ n] * event_id … webhook-id …
 * webhook-timestamp … webhook-signature … [webhook-replay …] body …`.
 * Accepted = the XADD reply (the entry id, kept as the excerpt): the server
 * has applied it, and it is as durable as the server's persistence is
 * configured (`appendonly yes` + `appendfsync always` for no loss on a
 * crash). Standalone servers only: a cluster redirect (MOVED, ASK) is a
 * failed attempt, never followed, and no Sentinel is asked for a master.
 */
interface RedisConn extends Connection {
  redis: Redis;
}

export const redisClient: BrokerClient<RedisConn> = {
  schemes: ['redis:', 'rediss:'],

  async open(broker, address, target, broken) {
    const redis = new Redis({
      host: address,
      port: broker.port,
      ...(broker.username ? { username: broker.username } : {}),
      ...(broker.password ? { password: broker.password } : {}),
      db: Number(broker.url.pathname.slice(1)) || 0,
      ...(broker.tls ? { tls: tlsOptions(broker, target.caCertificate) } : {}),
      connectionName: 'platform-api-event-destinations',
      lazyConnect: true,
      connectTimeout: CONNECT_TIMEOUT_MS,
      // Never reconnect, queue or resend by itself: the pool reconnects through the network policy.
      retryStrategy: () => null,
      reconnectOnError: () => false,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
    });
    const conn: RedisConn = {
      redis,
      // The socket can have ended (the server closed it) a moment before ioredis leaves `ready`.
      isOpen: () => redis.status === 'ready' && (redis as unknown as { stream?: { writable: boolean } }).stream?.writable === true,
      close: async () => redis.disconnect(),
    };
    let lastError: Error | null = null;
    redis.on('error', (e: Error) => {
      lastError = e;
    });
    await new Promise<void>((resolve, reject) => {
      redis.once('ready', resolve);
      redis.once('end', () => reject(lastError ?? new Error('connection closed')));
      redis.connect().catch(() => {});
    });
    redis.once('end', () => broken(conn, lastError ?? new Error('connection closed')));
    return conn;
  },

  async publish({ redis }, target, message) {
    const stream = expandTemplate(target.template, target, message);
    const args = [
      ...(target.maxLen ? ['MAXLEN', '~', String(target.maxLen)] : []),
      '*',
      'event_id',
      message.eventId,
      ...signedFields(message).flat(),
      'body',
      message.body,
    ];
    try {
      return { excerpt: await redis.xadd(stream, ...(args as [string])) };
    } catch (e) {
      const text = (e as Error).message;
      if (/^(MOVED|ASK) /.test(text)) throw new PublishFailure('redirect_not_followed', text);
      throw e;
    }
  },
};
