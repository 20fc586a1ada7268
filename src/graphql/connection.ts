import { DomainError, isDomainError } from '../domain/errors.ts';
import type { Page } from '../domain/action/list.ts';

/**
 * The one adapter from REST list pages (src/domain/action/list.ts) to Relay
 * connections: `first`/`after` map to `limit`/`starting_after` (and their
 * errors name the GraphQL argument). Backward paging (`last`/`before`) is
 * refused, as most REST lists page one way only; a list that also reads in
 * the other order (the event feed: REST `order=desc`) passes `backward`, and
 * `last`/`before` map to `limit`/`starting_after` of that order, the page
 * turned back to the connection's order. Cursors are ids unless the list says
 * otherwise (the event feed pages by seq).
 */
export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

const FORWARD: Record<string, string> = { limit: 'first', starting_after: 'after' };
const BACKWARD: Record<string, string> = { limit: 'last', starting_after: 'before' };

/** A page request: `reversed` asks for the list's other order (backward paging). */
export interface Paging {
  limit?: number;
  starting_after?: string;
  reversed?: true;
}

export async function listConnection<T extends { id: string }>(
  args: ConnectionArgs,
  list: (paging: Paging) => Promise<Page<T> | { data: T[]; has_more: boolean }>,
  cursorOf: (node: T) => string = (node) => node.id,
  /** The list's other input names its arguments spell differently (e.g. `subject_type`: `subjectType`), for errors. */
  argNames: Record<string, string> = {},
  /** Whether `list` reads in the other order too (`reversed`), so `last`/`before` page backward. */
  backward = false,
) {
  const back = args.last != null || args.before != null;
  if (back && !backward) {
    throw new DomainError('invalid_request', 'This list pages with first and after only', args.last != null ? 'last' : 'before');
  }
  if (back && (args.first != null || args.after != null)) {
    throw new DomainError(
      'invalid_request',
      'Page forward (first, after) or backward (last, before), not both',
      args.first != null ? 'first' : 'after',
    );
  }
  const names = { ...argNames, ...(back ? BACKWARD : FORWARD) };
  const [limit, cursor] = back ? [args.last, args.before] : [args.first, args.after];
  let page;
  try {
    page = await list({
      ...(limit != null ? { limit } : {}),
      ...(cursor != null ? { starting_after: cursor } : {}),
      ...(back ? { reversed: true as const } : {}),
    });
  } catch (e) {
    if (isDomainError(e) && e.param && names[e.param])
      throw new DomainError(e.code, e.message.replace(e.param, names[e.param]!), names[e.param]!);
    throw e;
  }
  // Backward, the page comes in the other order: its edges keep the connection's (Relay), so it is turned back.
  const nodes = back ? [...page.data].reverse() : page.data;
  const first = nodes[0];
  const last = nodes.at(-1);
  return {
    edges: nodes.map((node) => ({ cursor: cursorOf(node), node })),
    pageInfo: {
      hasNextPage: back ? cursor != null : page.has_more,
      hasPreviousPage: back ? page.has_more : cursor != null,
      startCursor: first ? cursorOf(first) : null,
      endCursor: last ? cursorOf(last) : null,
    },
  };
}
