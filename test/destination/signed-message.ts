import { randomBytes } from 'node:crypto';
import type { DestinationMessage, PublishOptions } from '../../src/domain/destination/transport.ts';
import { newId } from '../../src/domain/id.ts';
import { webhookHeaders } from '../../src/domain/webhook/signature.ts';

/**
 * Messages for the transport-level tests and bench/destinations.ts, signed exactly as the engine signs a webhook
 * body (no test-runner import here, so the bench can use it).
 */
export const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/** Loopback allowed (the brokers run there), private networks not: the default of a test deployment. */
export const POLICY: PublishOptions = { allowLoopback: true, allowPrivateNetworks: false, timeoutMs: 5000 };

export function signedMessage(eventType = 'entity.updated', replayOperationId: string | null = null): DestinationMessage {
  const eventId = newId('event');
  const body = JSON.stringify({ id: eventId, type: eventType, created: new Date().toISOString(), data: { n: Math.random() } });
  return {
    eventId,
    eventType,
    body,
    headers: webhookHeaders([SECRET], eventId, Math.floor(Date.now() / 1000), body),
    replayOperationId,
  };
}
