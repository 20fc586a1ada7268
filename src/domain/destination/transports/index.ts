import type { DestinationType, Transport } from '../transport.ts';
import { brokerTransport, type TransportOptions } from './broker-transport.ts';
import { natsClient } from './nats.ts';
import { rabbitmqClient } from './rabbitmq.ts';
import { redisClient } from './redis.ts';

export type { TransportOptions };

/** One transport per destination type, each with its own connections (docs/destinations.md). */
export function createTransports(options: TransportOptions = {}): Record<DestinationType, Transport> {
  return {
    rabbitmq: brokerTransport(rabbitmqClient, options),
    nats: brokerTransport(natsClient, options),
    redis: brokerTransport(redisClient, options),
  };
}
