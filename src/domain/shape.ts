import { z } from 'zod';

/**
 * What a front derives from a presenter's zod schema beyond what zod itself
 * says (src/graphql/derive.ts): which strings are timestamps. It is a registry
 * of its own, not zod's global one, so the OpenAPI documents (z.toJSONSchema
 * reads the global registry) are unchanged by it. A schema cloned from a
 * registered one (`.describe()`) inherits its entry.
 */
export interface ShapeMeta {
  /** An RFC 3339 / ISO 8601 instant: GraphQL's `DateTime`. */
  timestamp?: true;
}

export const shape = z.registry<ShapeMeta>();

/** An instant as every presenter writes it (`Date#toISOString()`). */
export const isoTime = z.string().describe('ISO 8601 timestamp').register(shape, { timestamp: true });
