import type { PagePromise } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';
import { Resource } from './resource.ts';
import type { PlatformEvent } from './types.ts';

export interface EventListParams {
  /** One public event type. */
  type?: string;
  /** 1 to 100, default 20. */
  limit?: number;
  /** A `seq` number or an `evt_` id. */
  startingAfter?: string | number;
}

/** The feed: ascending `seq` (unlike other lists), so auto-paging tails the log. */
export class Events extends Resource {
  list(params: EventListParams = {}, options?: RequestOptions): PagePromise<PlatformEvent> {
    const { startingAfter, ...rest } = params;
    return this.page('/events', { ...rest, startingAfter: startingAfter === undefined ? undefined : String(startingAfter) }, options);
  }
}
