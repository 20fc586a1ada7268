import { DomainError, isDomainError } from '../domain/errors.ts';
import type { Page } from '../domain/action/list.ts';

/**
 * The one adapter from REST list pages (src/domain/action/list.ts) to Relay
 * connections: `first`/`after` map to `limit`/`starting_after` (and their
 * errors name the GraphQL argument); backward paging is refused, as the REST
 * lists page one way only. Cursors are ids unless the list says otherwise
 * (the event feed pages by seq).
 */
export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

const PARAMS: Record<string, string> = { limit: 'first', starting_after: 'after' };

export async function listConnection<T extends { id: string }>(
  args: ConnectionArgs,
  list: (paging: { limit?: number; starting_after?: string }) => Promise<Page<T> | { data: T[]; has_more: boolean }>,
  cursorOf: (node: T) => string = (node) => node.id,
  /** The list's other input names its arguments spell differently (e.g. `subject_type`: `subjectType`), for errors. */
  argNames: Record<string, string> = {},
) {
  const names = { ...argNames, ...PARAMS };
  if (args.last != null || args.before != null) {
    throw new DomainError('invalid_request', 'This list pages with first and after only', args.last != null ? 'last' : 'before');
  }
  let page;
  try {
    page = await list({
      ...(args.first != null ? { limit: args.first } : {}),
      ...(args.after != null ? { starting_after: args.after } : {}),
    });
  } catch (e) {
    if (isDomainError(e) && e.param && names[e.param])
      throw new DomainError(e.code, e.message.replace(e.param, names[e.param]!), names[e.param]!);
    throw e;
  }
  const first = page.data[0];
  const last = page.data.at(-1);
  return {
    edges: page.data.map((node) => ({ cursor: cursorOf(node), node })),
    pageInfo: {
      hasNextPage: page.has_more,
      hasPreviousPage: args.after != null,
      startCursor: first ? cursorOf(first) : null,
      endCursor: last ? cursorOf(last) : null,
    },
  };
}

/** Omitted GraphQL arguments stay omitted in the domain input (an explicit null is passed on). */
export const given = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
