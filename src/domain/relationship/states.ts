/** A relationship's lifecycle: `created → active ⇄ paused → ended`; ended is final (a new relationship may follow). */
export const RELATIONSHIP_STATUSES = ['created', 'active', 'paused', 'ended'] as const;
export type RelationshipStatus = (typeof RELATIONSHIP_STATUSES)[number];
