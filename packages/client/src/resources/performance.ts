import type { RequestOptions } from '../request-sender.ts';
import { Resource, path } from './resource.ts';
import type { AssertionSubject, MeasurementBatch, PerformanceRollup, PerformanceWindow, ProgramTier, ProgramTierChange } from './types.ts';

export type MeasurementParams = AssertionSubject & {
  metric: string;
  value: number;
  occurredAt: string | Date;
  program?: string;
  /** Your id for it: a repeat within the organization is a duplicate, never counted twice. */
  externalId?: string;
};

export type RollupParams = Partial<AssertionSubject> & {
  metric: string;
  window: PerformanceWindow;
  program?: string;
  since?: string | Date;
  until?: string | Date;
  limit?: number;
};

export interface RollupPage {
  object: 'list';
  data: PerformanceRollup[];
  /** The next page: `until` = the last `periodStart`. */
  hasMore: boolean;
}

const iso = (d: string | Date | undefined) => (d instanceof Date ? d.toISOString() : d);

/** Performance: measurement batches (up to 500) and rollups per UTC day, ISO week or month. */
export class Performance extends Resource {
  record(measurements: MeasurementParams[], options?: RequestOptions): Promise<MeasurementBatch> {
    const body = { measurements: measurements.map((m) => ({ ...m, occurredAt: iso(m.occurredAt) })) };
    return this.one({ method: 'POST', path: '/performance/measurements', body, idempotent: true, options });
  }

  rollups(params: RollupParams, options?: RequestOptions): Promise<RollupPage> {
    const query = { ...params, since: iso(params.since), until: iso(params.until) };
    return this.one({ method: 'GET', path: '/performance/rollups', query, options });
  }
}

export type TierParams = { name: string; metric: string; threshold: number; rateBps: number };

/** A program's tier ladder; every change answers the `program.retier` operation (`operations.wait` it). */
export class ProgramTiers extends Resource {
  create(program: string, params: TierParams, options?: RequestOptions): Promise<ProgramTierChange> {
    return this.one({ method: 'POST', path: path('/programs/{id}/tiers', program), body: { ...params }, idempotent: true, options });
  }

  async list(program: string, options?: RequestOptions): Promise<ProgramTier[]> {
    const page = await this.one<{ data: ProgramTier[] }>({ method: 'GET', path: path('/programs/{id}/tiers', program), options });
    return page.data;
  }

  update(program: string, tier: string, params: Partial<TierParams>, options?: RequestOptions): Promise<ProgramTierChange> {
    const spec = {
      method: 'POST' as const,
      path: path('/programs/{id}/tiers/{tier}', program, tier),
      body: { ...params },
      idempotent: true,
      options,
    };
    return this.one(spec);
  }

  delete(
    program: string,
    tier: string,
    options?: RequestOptions,
  ): Promise<ProgramTierChange<{ id: string; object: 'program_tier'; deleted: true }>> {
    return this.one({ method: 'DELETE', path: path('/programs/{id}/tiers/{tier}', program, tier), idempotent: true, options });
  }
}
