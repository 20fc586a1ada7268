import { z } from 'zod';
import { listLimit } from '../platform/rate-limit.ts';

/**
 * The one list shape of Surface B: `limit` (1..100, default 20) and a
 * `starting_after` cursor in, `{ object: 'list', data, has_more }` out. A page
 * is fetched with one row more than asked, which says whether there is more.
 */
export const ListInput = z.strictObject({
  limit: listLimit,
  starting_after: z.string().min(1).optional(),
});
export type ListQuery = z.output<typeof ListInput>;

export const listOf = <T extends z.ZodType>(item: T) => z.object({ object: z.literal('list'), data: z.array(item), has_more: z.boolean() });

export interface Page<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

/** The page of `rows` fetched with `limit + 1`. */
export const pageOf = <T>(rows: T[], limit: number): Page<T> => ({
  object: 'list',
  data: rows.slice(0, limit),
  has_more: rows.length > limit,
});

/** A whole, unpaged list in the same shape (e.g. a program's requirements). */
export const wholeList = <T>(data: T[]): Page<T> => ({ object: 'list', data, has_more: false });

/**
 * Newest first, paged backward by id (ids are time-ordered). `find` resolves
 * the cursor the way the object itself is looked up (an unknown or foreign id
 * is a 404 naming `starting_after`); `fetch` reads `take` rows below it.
 */
export async function newestFirst<R>(
  q: ListQuery,
  find: (id: string, param: string) => Promise<{ id: string }>,
  fetch: (below: { id?: { lt: string } }, take: number) => Promise<R[]>,
): Promise<Page<R>> {
  const cursor = q.starting_after === undefined ? undefined : await find(q.starting_after, 'starting_after');
  return pageOf(await fetch(cursor ? { id: { lt: cursor.id } } : {}, q.limit + 1), q.limit);
}
