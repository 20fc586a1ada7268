/**
 * The public event vocabulary (the spec's table). Only these types leave the
 * organization: the feed, webhooks and subscriptions never carry any other.
 */
export const PUBLIC_EVENT_TYPES = [
  'distribution.launching',
  'distribution.live',
  'distribution.paused',
  'distribution.resumed',
  'distribution.completed',
  'distribution.failed',
  'distribution.canceled',
  'deployment.created',
  'deployment.activated',
  'deployment.rejected',
  'deployment.paused',
  'deployment.completed',
  'deployment.drifted',
  'deployment.cancel_requested',
  'deployment.canceled',
  'deployment.cleanup_failed',
  'relationship.created',
  'relationship.activated',
  'relationship.paused',
  'relationship.resumed',
  'relationship.ended',
  'enrollment.created',
  'enrollment.approved',
  'enrollment.rejected',
  'enrollment.activated',
  'enrollment.qualified',
  'enrollment.disqualified',
  'assertion.created',
  'assertion.revoked',
  'payout.created',
  'payout.settled',
  'payout.failed',
  'operation.succeeded',
  'operation.failed',
  'operation.cancel_requested',
  'operation.canceled',
  'operation.superseded',
  'budget.reserved',
  'budget.released',
  'budget.reserve_failed',
] as const;

export type PublicEventType = (typeof PUBLIC_EVENT_TYPES)[number];

const PUBLIC = new Set<string>(PUBLIC_EVENT_TYPES);
export const isPublicEventType = (t: string): t is PublicEventType => PUBLIC.has(t);

/** Legacy relationship spellings: valid subscription entries, never emitted. */
export const LEGACY_EVENT_ALIASES: Record<string, PublicEventType> = {
  'program_member.created': 'relationship.created',
  'program_member.activated': 'relationship.activated',
  'program_member.paused': 'relationship.paused',
  'program_member.resumed': 'relationship.resumed',
  'program_member.ended': 'relationship.ended',
};

/** The canonical public type a subscription entry stands for, or undefined when it is not one. */
export function canonicalEventType(entry: string): PublicEventType | undefined {
  if (isPublicEventType(entry)) return entry;
  return Object.hasOwn(LEGACY_EVENT_ALIASES, entry) ? LEGACY_EVENT_ALIASES[entry] : undefined;
}

/** True when an endpoint's `enabled_events` (empty = all public types) covers `type`. */
export function subscriptionCovers(enabled: readonly string[], type: string): boolean {
  return isPublicEventType(type) && (enabled.length === 0 || enabled.some((e) => canonicalEventType(e) === type));
}
