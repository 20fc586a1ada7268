import { z } from 'zod';
import type { Deployment as DeploymentRow, Distribution as DistributionRow } from '../../db/generated/client.ts';
import { DEPLOYMENT_STATUSES, DISTRIBUTION_STATUSES } from './states.ts';
import { isoTime } from '../shape.ts';

/** A distribution as both fronts show it. */
export const Distribution = z.object({
  id: z.string().describe('prefix dist_'),
  object: z.literal('distribution'),
  brand: z.string(),
  name: z.string(),
  status: z.enum(DISTRIBUTION_STATUSES),
  budget: z.number().int().describe('minor units'),
  budget_reserved: z.number().int().describe('held from the brand wallet, not yet spent'),
  budget_spent: z.number().int(),
  livemode: z.boolean(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type PublicDistribution = z.output<typeof Distribution>;

export function presentDistribution(row: DistributionRow): PublicDistribution {
  return {
    id: row.id,
    object: 'distribution',
    brand: row.brandId,
    name: row.name,
    status: row.status as PublicDistribution['status'],
    budget: Number(row.budget),
    budget_reserved: Number(row.reserved),
    budget_spent: Number(row.spent),
    livemode: row.livemode,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export const Deployment = z.object({
  id: z.string().describe('prefix dep_'),
  object: z.literal('deployment'),
  distribution: z.string(),
  provider: z.string(),
  config: z.record(z.string(), z.unknown()),
  connection: z.string().nullable().describe('the conn_ connection it places through, if any'),
  status: z.enum(DEPLOYMENT_STATUSES),
  livemode: z.boolean(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type PublicDeployment = z.output<typeof Deployment>;

export function presentDeployment(row: DeploymentRow): PublicDeployment {
  return {
    id: row.id,
    object: 'deployment',
    distribution: row.distributionId,
    provider: row.provider,
    config: row.config as Record<string, unknown>,
    connection: row.connectionId,
    status: row.status as PublicDeployment['status'],
    livemode: row.livemode,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
