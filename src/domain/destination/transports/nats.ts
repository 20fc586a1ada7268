import { isIP } from 'node:net';
import { connect, headers as natsHeaders, type ConnectionOptions, type JetStreamClient, type NatsConnection } from 'nats';
import { expandTemplate } from '../transport.ts';
import { PublishFailure, signedFields } from './attempt.ts';
import { tlsOptions, type BrokerUrl } from './broker-address.ts';
import type { BrokerClient } from './broker-transport.ts';
import { CONNECT_TIMEOUT_MS, type Connection } from './connection-pool.ts';

/**
 * NATS JetStream: a publish to the subject template with the message id
 * `<ed_id>:<evt_id>` (`:<op_id>` added for a replay, so a replay inside the
 * stream's duplicate window is stored again rather than dropped). Accepted =
 * the PubAck, which the server sends once the stream stored the message
 * under its configured replication and sync policy; a PubAck with
 * `duplicate: true` means the stream already holds that id, and counts as
 * delivered (recorded in the excerpt). Streams are never created: "no
 * responders" means no stream is bound to the subject, a failed attempt.
 * The client is told the one checked address and follows no other: no
 * cluster `connect_urls`, no reconnect of its own.
 */
const PING_INTERVAL_MS = 30_000;

interface NatsConn extends Connection {
  nc: NatsConnection;
  js: JetStreamClient;
}

function credentials(broker: BrokerUrl): Partial<ConnectionOptions> {
  if (broker.url.password) return { user: broker.username, pass: broker.password };
  // nats://<token>@host: a token alone.
  if (broker.url.username) return { token: broker.username };
  return {};
}

export const natsClient: BrokerClient<NatsConn> = {
  schemes: ['nats:', 'tls:'],

  async open(broker, address, target, broken) {
    const nc = await connect({
      servers: `${isIP(address) === 6 ? `[${address}]` : address}:${broker.port}`,
      name: 'platform-api event destinations',
      ...credentials(broker),
      // A TLS URL requires TLS (the client refuses a server that does not offer it); a non-TLS one is loopback only.
      tls: broker.tls ? (tlsOptions(broker, target.caCertificate) as ConnectionOptions['tls']) : null,
      reconnect: false,
      maxReconnectAttempts: 0,
      ignoreClusterUpdates: true,
      noRandomize: true,
      resolve: false,
      timeout: CONNECT_TIMEOUT_MS,
      pingInterval: PING_INTERVAL_MS,
    });
    const conn: NatsConn = { nc, js: nc.jetstream(), isOpen: () => !nc.isClosed(), close: () => nc.close().catch(() => {}) };
    void nc.closed().then((e) => broken(conn, e ?? new Error('connection closed')));
    return conn;
  },

  async publish({ js }, target, message, deadline) {
    const subject = expandTemplate(target.template, target, message);
    const h = natsHeaders();
    for (const [name, value] of signedFields(message)) h.set(name, value);
    h.set('content-type', 'application/json');
    const msgID = [target.id, message.eventId, ...(message.replayOperationId ? [message.replayOperationId] : [])].join(':');
    try {
      const ack = await js.publish(subject, Buffer.from(message.body), { msgID, headers: h, timeout: Math.max(1, deadline - Date.now()) });
      return { excerpt: `${ack.duplicate ? 'duplicate ' : ''}stream=${ack.stream} seq=${ack.seq}` };
    } catch (e) {
      if ((e as { code?: string }).code === '503')
        throw new PublishFailure('no_stream', `no stream is bound to subject '${subject}' (no responders)`);
      throw e;
    }
  },
};
