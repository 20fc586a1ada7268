import { DomainError, isDomainError } from '../domain/errors.ts';

/**
 * REST list pages as Relay connections: `first`/`after` map to `limit`/
 * `starting_after` (and their errors name the GraphQL argument); backward
 * paging is refused, as the REST lists page one way only.
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
  list: (paging: { limit?: number; starting_after?: string }) => Promise<{ data: T[]; has_more: boolean }>,
) {
  if (args.last != null || args.before != null) {
    throw new DomainError('invalid_request', 'This list pages with first and after only', args.last != null ? 'last' : 'before');
  }
  let page;
  try {
    page = await list({ ...(args.first != null ? { limit: args.first } : {}), ...(args.after != null ? { starting_after: args.after } : {}) });
  } catch (e) {
    if (isDomainError(e) && e.param && PARAMS[e.param]) throw new DomainError(e.code, e.message.replace(e.param, PARAMS[e.param]!), PARAMS[e.param]!);
    throw e;
  }
  return {
    edges: page.data.map((node) => ({ cursor: node.id, node })),
    pageInfo: {
      hasNextPage: page.has_more,
      hasPreviousPage: args.after != null,
      startCursor: page.data[0]?.id ?? null,
      endCursor: page.data.at(-1)?.id ?? null,
    },
  };
}

/** Omitted GraphQL arguments stay omitted in the domain input (an explicit null is passed on). */
export const given = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
