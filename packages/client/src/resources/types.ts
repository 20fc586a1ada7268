/**
 * The client's (camelCase) types of Surface B: the resource objects and every action's params are generated from the
 * server's schemas (generated/types.ts, `npm run client:generate`); what follows is what a schema cannot say.
 */
import type { Operation } from '../generated/types.ts';

export * from '../generated/types.ts';
export type { EventDataMap, EventType, TypedEvent } from '../typed-event.ts';

/** The fields every live-mode object carries. */
export type Timestamped = Pick<Operation, 'livemode' | 'createdAt'>;

/**
 * A claim's subject: an entity, or an external user id with its issuer (always together). The params types list the
 * three as optional, as the schema does; the server refuses any other combination.
 */
export type AssertionSubject = { entity: string } | { externalUserId: string; issuer: string };
