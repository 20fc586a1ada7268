import type { DestinationMessage, DestinationTarget, Transport } from '../transport.ts';
import { attempt, type Accepted } from './attempt.ts';
import { checkedAddress, connectionKey, type BrokerUrl, type Resolve } from './broker-address.ts';
import { ConnectionPool, type Connection } from './connection-pool.ts';

export interface TransportOptions {
  /** How long an unused broker connection stays open (default IDLE_MS, a few minutes). */
  idleMs?: number;
  /** The resolver the network policy checks (tests make a name resolve to a private address). */
  resolve?: Resolve;
}

/** What differs between broker types: their schemes, how a connection is opened, and what one publish awaits. */
export interface BrokerClient<C extends Connection> {
  schemes: readonly string[];
  /** Opens a connection to `address`, already checked under the network policy; calls `broken` once it breaks. */
  open(broker: BrokerUrl, address: string, target: DestinationTarget, broken: (conn: C, error: Error) => void): Promise<C>;
  /** Publishes and resolves once the broker accepted; throws a PublishFailure for a refusal it recognises. */
  publish(conn: C, target: DestinationTarget, message: DestinationMessage, deadline: number): Promise<Accepted>;
}

/**
 * A transport over a broker client: the attempt's deadline and outcome (attempt.ts), the shared connection per URL
 * and CA (connection-pool.ts), and the network policy checked on every address a connection is opened to.
 */
export function brokerTransport<C extends Connection>(client: BrokerClient<C>, options: TransportOptions): Transport {
  const pool = new ConnectionPool<C>(options.idleMs);
  return {
    publish: (target, message, policy) =>
      attempt(target.url, client.schemes, policy.timeoutMs, (broker, deadline) => {
        const key = connectionKey(target.url, target.caCertificate);
        const open = async () =>
          client.open(broker, await checkedAddress(broker, policy, options.resolve), target, (conn, e) => pool.broken(key, conn, e));
        return pool.with(key, deadline, open, (conn) => client.publish(conn, target, message, deadline));
      }),
    close: () => pool.closeAll(),
  };
}
