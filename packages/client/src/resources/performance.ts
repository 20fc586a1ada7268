import * as generated from '../generated/resources.ts';
import type { MeasurementBatch, MeasurementParams, PerformanceRollup, ProgramTier } from '../generated/types.ts';
import type { Page } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';

/** A page of rollups; the next page: `until` = the last `periodStart`. */
export type RollupPage = Page<PerformanceRollup>;

/** Performance: measurement batches (up to 500) and rollups per UTC day, ISO week or month. */
export class Performance extends generated.Performance {
  record(measurements: MeasurementParams[], options?: RequestOptions): Promise<MeasurementBatch> {
    return this.recordBatch({ measurements }, options);
  }
}

/** A program's tier ladder; every change answers the `program.retier` operation (`operations.wait` it). */
export class ProgramTiers extends generated.ProgramTiers {
  /** The whole ladder (it is one page). */
  async list(program: string, options?: RequestOptions): Promise<ProgramTier[]> {
    return (await this.listPage(program, options)).data;
  }
}
