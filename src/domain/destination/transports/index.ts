import type { DestinationType, Transport } from '../transport.ts';

/**
 * PLACEHOLDER, replaced by the transports helper's file (issue 34: RabbitMQ, NATS JetStream, Redis Streams): every
 * publish fails with `transport_unavailable`, so a destination's deliveries are attempted, recorded and retried by
 * the engine as for any broker that refuses them.
 */
export function createTransports(): Record<DestinationType, Transport> {
  const unavailable: Transport = {
    publish: async () => ({ ok: false, statusCode: null, error: 'transport_unavailable', excerpt: null, durationMs: 0 }),
    close: async () => {},
  };
  return { rabbitmq: unavailable, nats: unavailable, redis: unavailable };
}
