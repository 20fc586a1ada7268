import type { AddressPolicy } from '../webhook/address-guard.ts';
import type { AttemptOutcome } from '../webhook/send.ts';
import type { WebhookHeaders } from '../webhook/signature.ts';

/**
 * The seam between the one delivery engine (fan-out, lease, attempts, health,
 * replay, ordering, fairness: src/domain/webhook, src/workers/webhook-delivery.ts)
 * and the places an event can go. An HTTPS webhook endpoint is one place; an
 * event destination on a message broker (issue 34: the destinations guide) is
 * another, with one transport per broker type. The engine leases a delivery,
 * signs the body exactly as for a webhook, and hands the transport a message;
 * the transport answers an `AttemptOutcome` and never throws.
 */
export const DESTINATION_TYPES = ['rabbitmq', 'nats', 'redis'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

/** Where one destination publishes: its broker URL (decrypted, credentials included: never logged) and its templates. */
export interface DestinationTarget {
  /** `ed_…` */
  id: string;
  type: DestinationType;
  /** amqp(s)://, nats:// or tls://, redis(s)://; a non-TLS scheme only ever names a loopback host. */
  url: string;
  /** PEM bundle to verify the broker's certificate with, instead of the system's CAs. Verification is never off. */
  caCertificate: string | null;
  /** RabbitMQ: the exchange published to (never declared by the product). */
  exchange?: string;
  /** RabbitMQ routing key, NATS subject, Redis stream key: a template over TEMPLATE_PLACEHOLDERS. */
  template: string;
  /** Redis: `XADD … MAXLEN ~ n` when set. */
  maxLen?: number | null;
}

/** One attempt's message: the webhook body and the Standard Webhooks values, signed with the destination's secrets. */
export interface DestinationMessage {
  eventId: string;
  eventType: string;
  /** The event exactly as a webhook body carries it (JSON). */
  body: string;
  headers: WebhookHeaders;
  /** Set when a replay operation sends it (`webhook-replay`): NATS appends it to the message id. */
  replayOperationId: string | null;
}

export interface PublishOptions extends AddressPolicy {
  /** The attempt's deadline: connect (or reconnect), publish and the broker's acknowledgement. */
  timeoutMs: number;
}

export interface Transport {
  /** Publishes and waits for what "accepted" means for the type (confirm, PubAck, XADD reply). Never throws. */
  publish(target: DestinationTarget, message: DestinationMessage, options: PublishOptions): Promise<AttemptOutcome>;
  /** Closes every connection (process stop). */
  close(): Promise<void>;
}

/** What a template may name; anything else in braces is 400 invalid_request at create and update. */
export const TEMPLATE_PLACEHOLDERS = ['type', 'event_id', 'destination_id'] as const;

/** The placeholders a template names that are not in TEMPLATE_PLACEHOLDERS (empty when it is valid). */
export function unknownPlaceholders(template: string): string[] {
  return [...template.matchAll(/\{([^{}]*)\}/g)]
    .map((m) => m[1]!)
    .filter((name) => !(TEMPLATE_PLACEHOLDERS as readonly string[]).includes(name));
}

export function expandTemplate(template: string, target: DestinationTarget, message: DestinationMessage): string {
  const values: Record<(typeof TEMPLATE_PLACEHOLDERS)[number], string> = {
    type: message.eventType,
    event_id: message.eventId,
    destination_id: target.id,
  };
  return template.replace(/\{([a-z_]+)\}/g, (all, name: string) => values[name as keyof typeof values] ?? all);
}
