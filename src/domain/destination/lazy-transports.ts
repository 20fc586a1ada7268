import { DESTINATION_TYPES, type DestinationType, type Transport } from './transport.ts';

/**
 * The delivery worker's transports (src/runtime/services.ts), created on the first publish to a destination: a
 * process whose organizations have none never loads a broker client. A transport module that fails to load fails
 * the attempt (`transport_unavailable`), which the engine records and retries like any refused publish.
 */
export function lazyTransports(
  load: () => Promise<{ createTransports(): Record<DestinationType, Transport> }> = () => import('./transports/index.ts'),
): Record<DestinationType, Transport> {
  let created: Promise<Record<DestinationType, Transport>> | undefined;
  const entry = (type: DestinationType): Transport => ({
    publish: async (target, message, options) => {
      const started = performance.now();
      let transport: Transport;
      try {
        transport = (await (created ??= load().then((m) => m.createTransports())))[type];
      } catch {
        created = undefined;
        return {
          ok: false,
          statusCode: null,
          error: 'transport_unavailable',
          excerpt: null,
          durationMs: Math.round(performance.now() - started),
        };
      }
      return transport.publish(target, message, options);
    },
    close: async () => {
      const all = await created?.catch(() => undefined);
      await all?.[type].close();
    },
  });
  return Object.fromEntries(DESTINATION_TYPES.map((t) => [t, entry(t)])) as Record<DestinationType, Transport>;
}
