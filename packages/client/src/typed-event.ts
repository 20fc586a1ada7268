import type { EventDataMap, EventType } from './event-data.ts';
import type { PlatformEvent } from './generated/types.ts';

export type { EventDataMap, EventType } from './event-data.ts';

/**
 * A public event whose `data` is typed by its `type` (a discriminated union: narrowing on `event.type` narrows
 * `event.data`), generated from the server's payload schemas (event-data.ts). Operator test events (`data.test`)
 * carry whatever data the operator gave.
 */
export type TypedEvent<T extends EventType = EventType> = {
  [K in T]: Omit<PlatformEvent<EventDataMap[K]>, 'type'> & { type: K };
}[T];
