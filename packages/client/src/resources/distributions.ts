import type { PagePromise } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';
import { Resource, path } from './resource.ts';
import type { Deployment, Distribution, DistributionOperation, DistributionValidation } from './types.ts';

export interface DistributionCreateParams {
  name: string;
  /** Minor units, reserved from the brand wallet. */
  budget: number;
  deployments: { provider: string; config?: Record<string, unknown> }[];
}

/**
 * Distributions (brand-scoped: the client's `brand`) and their deployments.
 * Every verb that does real work answers 202 with `{ operation, distribution }`;
 * poll the operation with `operations.wait`. The Idempotency-Key of a launch
 * also dedupes the operation: a replay returns the same one.
 */
export class Distributions extends Resource {
  /** Creates and launches. */
  create(params: DistributionCreateParams, options?: RequestOptions): Promise<DistributionOperation> {
    return this.one({ method: 'POST', path: '/distributions', body: { ...params }, idempotent: true, options });
  }

  /** Dry run: creates nothing and moves no money. */
  validate(params: DistributionCreateParams, options?: RequestOptions): Promise<DistributionValidation> {
    return this.one({ method: 'POST', path: '/distributions/validate', body: { ...params }, idempotent: true, options });
  }

  retrieve(id: string, options?: RequestOptions): Promise<Distribution> {
    return this.one({ method: 'GET', path: path('/distributions/{id}', id), options }, 'distribution');
  }

  /** Newest first. */
  list(params: { status?: string; limit?: number; startingAfter?: string } = {}, options?: RequestOptions): PagePromise<Distribution> {
    return this.page('/distributions', params, options);
  }

  /** Relaunch (e.g. after a failed launch); reuses a launch that waits on funding. */
  launch(id: string, options?: RequestOptions): Promise<DistributionOperation> {
    return this.verb(id, 'launch', options);
  }

  pause(id: string, options?: RequestOptions): Promise<DistributionOperation> {
    return this.verb(id, 'pause', options);
  }

  resume(id: string, options?: RequestOptions): Promise<DistributionOperation> {
    return this.verb(id, 'resume', options);
  }

  /** Runs on the control plane: may coexist with the launch it cancels. */
  cancel(id: string, options?: RequestOptions): Promise<DistributionOperation> {
    return this.verb(id, 'cancel', options);
  }

  private verb(id: string, verb: string, options?: RequestOptions): Promise<DistributionOperation> {
    return this.one({ method: 'POST', path: path(`/distributions/{id}/${verb}`, id), idempotent: true, options });
  }
}

export class Deployments extends Resource {
  /** Newest first; `distribution` filters to one distribution's deployments. */
  list(params: { distribution?: string; limit?: number; startingAfter?: string } = {}, options?: RequestOptions): PagePromise<Deployment> {
    return this.page('/deployments', params, options);
  }

  retrieve(id: string, options?: RequestOptions): Promise<Deployment> {
    return this.one({ method: 'GET', path: path('/deployments/{id}', id), options }, 'deployment');
  }
}
