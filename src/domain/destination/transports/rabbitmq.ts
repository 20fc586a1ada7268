import amqp from 'amqplib';
import { expandTemplate, type DestinationTarget } from '../transport.ts';
import { PublishFailure, signedFields } from './attempt.ts';
import { tlsOptions } from './broker-address.ts';
import type { BrokerClient } from './broker-transport.ts';
import { CONNECT_TIMEOUT_MS, type Connection } from './connection-pool.ts';

/**
 * RabbitMQ (AMQP 0-9-1): a persistent message published `mandatory` on a
 * confirm channel to the destination's exchange (never declared here) with
 * its routing-key template. Accepted = the broker's `basic.ack`, which it
 * sends once the message is routed to every queue it matches and, for a
 * durable queue, written to disk. An unroutable message comes back as
 * `basic.return` before its ack; a missing exchange closes the channel
 * (404): both are failed attempts with that reason. One connection per URL,
 * one confirm channel per destination on it, so a destination's closed
 * channel touches no other destination; a closed channel is opened again on
 * the next publish.
 */
const HEARTBEAT_S = 30;

interface DestinationChannel {
  channel: amqp.ConfirmChannel;
  /** Returns (`basic.return`) not yet matched to their ack, by message id and routing key. */
  returned: Map<string, string[]>;
  /** The broker's reason, once it closed the channel. */
  closedBy: string | null;
}

interface AmqpConnection extends Connection {
  model: amqp.ChannelModel;
  channels: Map<string, Promise<DestinationChannel>>;
  /** The broker's reason, once the connection broke. */
  brokenBy: string | null;
  closed: boolean;
}

function channelFor(conn: AmqpConnection, target: DestinationTarget): Promise<DestinationChannel> {
  const key = `${target.id}\n${target.exchange ?? ''}`;
  let ch = conn.channels.get(key);
  if (!ch) {
    ch = conn.model.createConfirmChannel().then((channel) => {
      const state: DestinationChannel = { channel, returned: new Map(), closedBy: null };
      channel.on('error', (e: Error) => {
        state.closedBy = e.message;
      });
      channel.on('close', () => {
        if (conn.channels.get(key) === ch) conn.channels.delete(key);
      });
      channel.on('return', (m: amqp.Message) => {
        const fields = m.fields as amqp.Message['fields'] & { replyCode: number; replyText: string };
        const id = `${m.properties.messageId}\n${fields.routingKey}`;
        state.returned.set(id, [...(state.returned.get(id) ?? []), `${fields.replyText} (${fields.replyCode})`]);
      });
      return state;
    });
    ch.catch(() => conn.channels.delete(key));
    conn.channels.set(key, ch);
  }
  return ch;
}

export const rabbitmqClient: BrokerClient<AmqpConnection> = {
  schemes: ['amqp:', 'amqps:'],

  async open(broker, address, target, broken) {
    const model = await amqp.connect(
      {
        protocol: broker.tls ? 'amqps' : 'amqp',
        hostname: address,
        port: broker.port,
        // Both absent: amqplib's guest/guest, as with a URL without credentials.
        ...(broker.url.username || broker.url.password ? { username: broker.username, password: broker.password } : {}),
        vhost: decodeURIComponent(broker.url.pathname.slice(1)) || '/',
        heartbeat: HEARTBEAT_S,
      },
      {
        ...(broker.tls ? tlsOptions(broker, target.caCertificate) : {}),
        timeout: CONNECT_TIMEOUT_MS,
        noDelay: true,
        clientProperties: { connection_name: 'platform-api event destinations' },
      },
    );
    const conn: AmqpConnection = {
      model,
      channels: new Map(),
      brokenBy: null,
      closed: false,
      isOpen: () => !conn.closed,
      close: () => model.close().catch(() => {}),
    };
    model.on('error', (e: Error) => {
      conn.brokenBy = e.message;
    });
    model.on('close', (e?: Error) => {
      conn.closed = true;
      broken(conn, e ?? new Error('connection closed'));
    });
    return conn;
  },

  async publish(conn, target, message) {
    const state = await channelFor(conn, target);
    const exchange = target.exchange ?? '';
    const routingKey = expandTemplate(target.template, target, message);
    const timestamp = Number(message.headers['webhook-timestamp']);
    await new Promise<void>((resolve, reject) => {
      const confirmed = (err: Error | null) => {
        if (!err) return resolve();
        if (state.closedBy?.includes('404'))
          return reject(new PublishFailure('exchange_not_found', state.closedBy.replace(/^.*?NOT_FOUND - /, '')));
        if (state.closedBy) return reject(new PublishFailure('channel_closed', state.closedBy));
        if (conn.brokenBy) return reject(new PublishFailure('connection_lost', conn.brokenBy));
        reject(new PublishFailure(err.message === 'message nacked' ? 'nacked' : 'connection_lost', err.message));
      };
      try {
        state.channel.publish(
          exchange,
          routingKey,
          Buffer.from(message.body),
          {
            persistent: true,
            mandatory: true,
            messageId: message.eventId,
            type: message.eventType,
            contentType: 'application/json',
            ...(Number.isFinite(timestamp) ? { timestamp } : {}),
            headers: Object.fromEntries(signedFields(message)),
          },
          confirmed,
        );
      } catch (e) {
        confirmed(e as Error);
      }
    });
    // The broker sends a `basic.return` before the ack of the same message.
    const id = `${message.eventId}\n${routingKey}`;
    const returns = state.returned.get(id);
    if (returns?.length) {
      const reason = returns.shift()!;
      if (!returns.length) state.returned.delete(id);
      throw new PublishFailure('unroutable', `${reason}: exchange '${exchange}', routing key '${routingKey}'`);
    }
    return { excerpt: null };
  },
};
