import * as generated from '../generated/resources.ts';
import type { BrandsListParams, Relationship } from '../generated/types.ts';
import type { RequestOptions } from '../request-sender.ts';

/** The paging params every list takes. */
export type ListPageParams = Pick<BrandsListParams, 'limit' | 'startingAfter'>;

export type RelationshipMove = 'activate' | 'pause' | 'resume' | 'end';

/** The selected brand's relationships: created → active ⇄ paused → ended. */
export class Relationships extends generated.Relationships {
  /** One of the four moves by name; ending one pauses the entity's active enrollments in the brand's programs. */
  move(id: string, move: RelationshipMove, options?: RequestOptions): Promise<Relationship> {
    return this[move](id, options);
  }
}
