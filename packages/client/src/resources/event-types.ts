import * as generated from '../generated/resources.ts';
import type { EventCatalogueEntry } from '../generated/types.ts';
import { camelKey } from '../key-case.ts';
import type { Page } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';

/**
 * The event-type catalogue (`GET /event_types`): every public type with the JSON Schema of its `data` and an
 * example. Like every response, both are camelCased, and so are the schema's `required` names: the schema the
 * client returns describes `event.data` as the client reads it.
 */
export class EventTypes extends generated.EventTypes {
  /**
   * Every public event type, ordered by type, as one page shaped like every list (`{ data, hasMore }`); the catalogue
   * is small and the same for everyone, so `hasMore` is false.
   */
  async list(options?: RequestOptions): Promise<Page<EventCatalogueEntry>> {
    const page = await this.listCatalogue(options);
    return { ...page, data: page.data.map(clientEntry) };
  }

  /** One type; a legacy `program_member.*` spelling answers its canonical `relationship.*` type. */
  async retrieve(type: string, options?: RequestOptions): Promise<EventCatalogueEntry> {
    return clientEntry(await this.retrieveEntry(type, options));
  }
}

const clientEntry = (e: EventCatalogueEntry): EventCatalogueEntry => ({ ...e, schema: camelRequired(e.schema) as Record<string, unknown> });

/** The keys were camelCased on the way in; a schema's `required` lists name keys in its values: camelCase them too. */
function camelRequired(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(camelRequired);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [k, k === 'required' && Array.isArray(x) ? x.map((n) => camelKey(String(n))) : camelRequired(x)]),
  );
}
