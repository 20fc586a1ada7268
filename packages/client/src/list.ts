import type { ApiResponse } from './request-sender.ts';

/** One page of a list, as the client exposes it (`has_more` on the wire). */
export interface Page<T> {
  object: 'list';
  data: T[];
  hasMore: boolean;
}

/**
 * What every `list` returns: a promise of the first page that can also page
 * for you. `autoPaging()` (or iterating the promise itself with `for await`)
 * yields every item across pages, fetching the next page with
 * `startingAfter` = the last item's id when `hasMore` is true.
 */
export interface PagePromise<T> extends Promise<Page<T>>, AsyncIterable<T> {
  autoPaging(): AsyncIterable<T>;
}

export function pagePromise<T extends { id: string }>(
  fetchPage: (startingAfter: string | undefined) => Promise<ApiResponse<Page<T>>>,
  startingAfter: string | undefined,
): PagePromise<T> {
  const first = fetchPage(startingAfter).then((r) => r.body);
  async function* iterate(): AsyncGenerator<T> {
    let page = await first;
    for (;;) {
      for (const item of page.data) yield item;
      const last = page.data.at(-1);
      if (!page.hasMore || !last) return;
      page = (await fetchPage(last.id)).body;
    }
  }
  return Object.assign(first, {
    autoPaging: () => ({ [Symbol.asyncIterator]: iterate }),
    [Symbol.asyncIterator]: iterate,
  });
}
