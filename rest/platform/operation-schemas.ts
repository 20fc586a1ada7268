import { z } from 'zod';
import { Operation } from '../../src/domain/operation/operation.ts';
import { DEPLOYMENT_STATUSES, DISTRIBUTION_STATUSES } from '../../src/domain/distribution/states.ts';

/** Response shapes of distributions and deployments, for the OpenAPI document (operations declare theirs: src/domain/operation/operation.ts). */
const time = z.string().describe('ISO 8601 timestamp');

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
  created_at: time,
  updated_at: time,
});
export const DistributionEnvelope = z.object({ distribution: Distribution });
export const DistributionOperation = z.object({ operation: Operation, distribution: Distribution });
export const DistributionList = z.object({ object: z.literal('list'), data: z.array(Distribution), has_more: z.boolean() });
export const DistributionValidation = z.object({
  object: z.literal('distribution_validation'),
  valid: z.literal(true),
  brand: z.string(),
  budget: z.number().int(),
  planned_spend: z.number().int(),
  deployments: z.number().int(),
  wallet_balance: z.number().int(),
  funding_sufficient: z.boolean(),
});

export const Deployment = z.object({
  id: z.string().describe('prefix dep_'),
  object: z.literal('deployment'),
  distribution: z.string(),
  provider: z.string(),
  config: z.record(z.string(), z.unknown()),
  status: z.enum(DEPLOYMENT_STATUSES),
  livemode: z.boolean(),
  created_at: time,
  updated_at: time,
});
export const DeploymentEnvelope = z.object({ deployment: Deployment });
export const DeploymentList = z.object({ object: z.literal('list'), data: z.array(Deployment), has_more: z.boolean() });
