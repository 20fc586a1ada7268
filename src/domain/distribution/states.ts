/**
 * The closed status sets of distributions and deployments: the presenters'
 * zod schemas (presenter.ts) enumerate them, so REST and OpenAPI follow, and
 * GraphQL declares its enums from them (src/graphql/schema/enums.ts).
 *
 * Distribution: launching → active | partially_active | completed | failed;
 * active/partially_active → paused → (resume) back; any but canceled and
 * completed → canceled. A failed distribution may be launched again.
 *
 * Deployment: pending → provisioning → in_review (provider review) → active
 * | completed | failed | rejected; active ↔ paused; a cancel moves a live one
 * to canceling, then canceled or cleanup_failed.
 */
export const DISTRIBUTION_STATUSES = ['launching', 'active', 'partially_active', 'paused', 'completed', 'failed', 'canceled'] as const;
export type DistributionStatus = (typeof DISTRIBUTION_STATUSES)[number];

export const DEPLOYMENT_STATUSES = [
  'pending',
  'provisioning',
  'in_review',
  'active',
  'paused',
  'completed',
  'failed',
  'rejected',
  'canceling',
  'canceled',
  'cleanup_failed',
] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** A deployment that may still be placed at its provider: what a cancel or a revoked connection tears down. */
export const LIVE_DEPLOYMENT_STATUSES = [
  'pending',
  'provisioning',
  'in_review',
  'active',
  'paused',
] as const satisfies readonly DeploymentStatus[];
