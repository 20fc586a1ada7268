/**
 * Every scope a platform token can hold: the spec's Surface B table and the
 * Surface A scopes. Token creation refuses anything else. `program_members:*`
 * are legacy aliases honoured on already-issued tokens only.
 */
export const SCOPES = {
  'org:read': 'Read the organization',
  'units:read': 'List units',
  'units:create': 'Create units',
  'units:delete': 'Delete draft units',
  'units:publish': 'Publish a draft unit',
  'programs:read': 'Read programs',
  'program_requirements:read': 'Read qualification rules',
  'program_requirements:write': 'Manage qualification rules',
  'program_tiers:read': 'Read the tier ladder',
  'program_tiers:write': 'Manage the tier ladder',
  'connect_config:read': 'Read partner connect configuration',
  'connect_config:write': 'Manage partner connect configuration',
  'handoff:read': 'Read signed-handoff issuers',
  'handoff:write': 'Manage signed-handoff issuers',
  'relationships:read': 'Read durable relationships',
  'relationships:write': 'Manage durable relationships',
  'enrollments:read': 'Read enrollments',
  'enrollments:write': 'Invite, approve and pause enrollments',
  'connections:read': 'Read provider identities and grants',
  'connections:write': 'Manage provider identities and grants',
  'distributions:read': 'Read distributions',
  'distributions:write': 'Manage distributions and the deployment verbs',
  'distributions:launch': 'Launch distributions (spends money)',
  'deployments:read': 'Read deployments',
  'performance:read': 'Read performance rollups',
  'performance:write': 'Ingest measurements',
  'events:read': 'Read the event feed',
  'webhooks:read': 'Read webhook endpoints',
  'webhooks:write': 'Manage webhook endpoints',
  'payouts:read': 'Read the payout ledger, runs and exports',
  'payouts:write': 'Manage payouts',
  'entities:read': 'Read entities',
  'assertions:read': 'Read assertions',
  'assertions:write': 'State and revoke assertions',
  'operations:read': 'Read operations (implicit on every token)',
} as const;

export type Scope = keyof typeof SCOPES;
export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

export const isScope = (s: string): s is Scope => Object.hasOwn(SCOPES, s);

/** Legacy spellings accepted on existing tokens, mapped to what they grant today. */
export const LEGACY_SCOPE_ALIASES: Record<string, Scope> = {
  'program_members:read': 'relationships:read',
  'program_members:write': 'relationships:write',
};

/** Granted to every valid token whether or not it was listed. */
export const IMPLICIT_SCOPES: readonly Scope[] = ['operations:read'];

/** The effective scope set of a token: its stored scopes, aliases resolved, implicit scopes added. */
export function effectiveScopes(stored: readonly string[]): Set<string> {
  const out = new Set<string>(IMPLICIT_SCOPES);
  for (const s of stored) out.add(LEGACY_SCOPE_ALIASES[s] ?? s);
  return out;
}
