import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Deployment } from '../../db/generated/client.ts';
import { DomainError } from '../errors.ts';
import { amount } from '../wallet/wallet.ts';
import { parseInput } from '../validation.ts';

/**
 * The provider adapter interface: what the operations engine asks of a
 * placement provider. Calls are made outside database transactions and must
 * be idempotent per deployment id (a resumed operation repeats the call it
 * was making when its worker died). A throw of TransientProviderError is
 * retried with backoff; anything the provider decides later (a review, an
 * asynchronous teardown) is read back with `review` / `cleanup` once the
 * provider's callback has been recorded on the deployment.
 */
export type ProvisionResult =
  | { state: 'active'; spend: number; complete: boolean; drifted: boolean }
  | { state: 'review' }
  | { state: 'failed'; reason: string };
export type TeardownResult = { state: 'done' } | { state: 'pending' } | { state: 'failed'; reason: string };

export interface ProviderAdapter {
  name: string;
  /** Validates a deployment's config at create (and validate) time; returns the normalized config. */
  parseConfig(config: unknown, param: string): Record<string, unknown>;
  provision(dep: Deployment, attempt: number): Promise<ProvisionResult>;
  /** The provider's review decision, once made. */
  review(dep: Deployment): 'approve' | 'reject' | undefined;
  pause(dep: Deployment): Promise<void>;
  resume(dep: Deployment): Promise<void>;
  teardown(dep: Deployment): Promise<TeardownResult>;
  /** The spend a deployment's activation consumes (checked against the budget up front). */
  plannedSpend(config: Record<string, unknown>): number;
}

export class TransientProviderError extends Error {}

/**
 * `sandbox`: an in-process provider whose behaviour is the deployment's
 * config, so every operation path can be driven on purpose:
 * - outcome: succeed | fail | review (then the operator's sandbox callback approves or rejects)
 * - spend: minor units consumed from the budget at activation
 * - complete: the placement finishes right after activation (deployment and distribution complete)
 * - drift: the provider reports the live placement drifted from what was asked
 * - transient_failures: the first N provision attempts fail transiently (retried with backoff)
 * - delay_ms: each provision call takes this long (to observe or interrupt a running operation)
 * - cleanup: succeed | fail | async (teardown settles when the operator's sandbox callback says so)
 */
export const SandboxConfig = z.strictObject({
  outcome: z.enum(['succeed', 'fail', 'review']).default('succeed'),
  spend: amount.default(0),
  complete: z.boolean().default(false),
  drift: z.boolean().default(false),
  transient_failures: z.number().int().min(0).max(10).default(0),
  delay_ms: z.number().int().min(0).max(30_000).default(0),
  cleanup: z.enum(['succeed', 'fail', 'async']).default('succeed'),
});
type Sandbox = z.output<typeof SandboxConfig>;

const state = (dep: Deployment) => dep.providerState as { review?: 'approve' | 'reject'; cleanup?: 'succeeded' | 'failed' };

export const sandboxProvider: ProviderAdapter = {
  name: 'sandbox',
  parseConfig: (config, param) => {
    try {
      return parseInput(SandboxConfig, config ?? {});
    } catch (e) {
      if (e instanceof DomainError)
        throw new DomainError(e.code, e.message.replace(/^Invalid /, `Invalid ${param}.`), e.param ? `${param}.${e.param}` : param);
      throw e;
    }
  },
  plannedSpend: (config) => (config as Sandbox).spend,
  provision: async (dep, attempt) => {
    const c = dep.config as Sandbox;
    if (c.delay_ms) await sleep(c.delay_ms);
    if (attempt <= c.transient_failures)
      throw new TransientProviderError(`sandbox: transient failure ${attempt} of ${c.transient_failures}`);
    if (c.outcome === 'fail') return { state: 'failed', reason: 'sandbox: the provider refused the placement' };
    if (c.outcome === 'review' && !state(dep).review) return { state: 'review' };
    return { state: 'active', spend: c.spend, complete: c.complete, drifted: c.drift };
  },
  review: (dep) => state(dep).review,
  pause: async () => {},
  resume: async () => {},
  teardown: async (dep) => {
    const c = dep.config as Sandbox;
    if (c.cleanup === 'fail' || state(dep).cleanup === 'failed') return { state: 'failed', reason: 'sandbox: teardown failed' };
    if (c.cleanup === 'async' && !state(dep).cleanup) return { state: 'pending' };
    return { state: 'done' };
  },
};

const PROVIDERS = new Map<string, ProviderAdapter>([[sandboxProvider.name, sandboxProvider]]);

export function providerFor(name: string, param = 'provider'): ProviderAdapter {
  const p = PROVIDERS.get(name);
  if (!p) throw new DomainError('invalid_request', `Unknown provider '${name}'; available: ${[...PROVIDERS.keys()].join(', ')}`, param);
  return p;
}
