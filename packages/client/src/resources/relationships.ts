import type { PagePromise } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';
import { Resource, path } from './resource.ts';
import type { AssertionSubject, Brand, Entity, Relationship, RelationshipStatus } from './types.ts';

export interface ListPageParams {
  limit?: number;
  startingAfter?: string;
}

/** The organization's brands, oldest first. */
export class Brands extends Resource {
  list(params: ListPageParams = {}, options?: RequestOptions): PagePromise<Brand> {
    return this.page('/brands', { ...params }, options);
  }

  retrieve(id: string, options?: RequestOptions): Promise<Brand> {
    return this.one({ method: 'GET', path: path('/brands/{id}', id), options });
  }
}

/** Entities, newest first; `externalUserId` with `issuer` narrows to the one they name. */
export class Entities extends Resource {
  list(params: ListPageParams & { externalUserId?: string; issuer?: string } = {}, options?: RequestOptions): PagePromise<Entity> {
    return this.page('/entities', { ...params }, options);
  }

  retrieve(id: string, options?: RequestOptions): Promise<Entity> {
    return this.one({ method: 'GET', path: path('/entities/{id}', id), options });
  }
}

export type RelationshipMove = 'activate' | 'pause' | 'resume' | 'end';

/** The selected brand's relationships: created → active ⇄ paused → ended. */
export class Relationships extends Resource {
  create(params: AssertionSubject, options?: RequestOptions): Promise<Relationship> {
    return this.one({ method: 'POST', path: '/relationships', body: { ...params }, idempotent: true, options });
  }

  list(
    params: ListPageParams & { entity?: string; externalUserId?: string; issuer?: string; status?: RelationshipStatus } = {},
    options?: RequestOptions,
  ): PagePromise<Relationship> {
    return this.page('/relationships', { ...params }, options);
  }

  retrieve(id: string, options?: RequestOptions): Promise<Relationship> {
    return this.one({ method: 'GET', path: path('/relationships/{id}', id), options });
  }

  /** Ending one pauses the entity's active enrollments in the brand's programs. */
  move(id: string, move: RelationshipMove, options?: RequestOptions): Promise<Relationship> {
    return this.one({ method: 'POST', path: path(`/relationships/{id}/${move}`, id), idempotent: true, options });
  }
}
