import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError } from '../errors.ts';
import { isStorableText } from '../input-guard.ts';
import { selectBrand } from '../platform/request-auth.ts';
import { canonicalEventType, isPublicEventType, PUBLIC_EVENT_TYPES } from './types.ts';

/**
 * The one definition of which events a reader wants, shared by the feed
 * (`GET /v1/platform/events`, GraphQL `events` query), the live stream
 * (GraphQL `events` subscription over graphql-ws and SSE) and webhook
 * endpoints (their `filter`: brands and subject types). Dimensions combine with AND; the entries of one dimension with OR.
 *
 * - `types`: public event types (the subscription also takes the legacy
 *   `program_member.*` spellings, standing for their `relationship.*` type).
 * - `brands`: brand ids or slugs of the caller's organization, resolved to
 *   ids. An event matches when its `brand` is one of them; organization-level
 *   events (`brand` null) never match a brand filter. `Service-Brand` never
 *   narrows the feed: only this filter does.
 * - `subject_types`, `subject_id`: the event's `subject`.
 *
 * Which brand an event carries: the brand the causing request selected
 * (`Service-Brand`, else the oldest brand), as stored on the brand-owned
 * resource it is about, so that work the request started later (an operation
 * step, a standing re-evaluation) carries the same brand:
 * distribution.*, deployment.*, budget.*, enrollment.*, operation.* of a
 * brand's operation, relationship.* and payout.* carry a brand;
 * assertion.* (claims about the organization's entities, shared by its
 * brands), operations without a brand and operator test events are
 * organization-level (null).
 */
export interface EventFilter {
  /** Canonical public types, sorted; undefined = every public type. */
  readonly types?: readonly string[];
  /** Brand ids, sorted. */
  readonly brands?: readonly string[];
  readonly subjectTypes?: readonly string[];
  readonly subjectId?: string;
  /** Equal for equal filters: subscribers sharing a key receive the same events. */
  readonly key: string;
  /** Whether a sequenced event passes (its type still has to be public: internal types never pass). */
  matches(row: FilterableRow): boolean;
}

export interface FilterableRow {
  type: string;
  brandId: string | null;
  subjectType: string;
  subjectId: string;
}

/** The filter's raw input, as REST (after splitting lists) and GraphQL hand it over. */
export interface EventFilterInput {
  /** One public type (feed and query: `type`). */
  type?: string | null;
  /** Several types (subscription: `types`, legacy spellings accepted). */
  types?: readonly string[] | null;
  brands?: readonly string[] | null;
  subject_types?: readonly string[] | null;
  subject_id?: string | null;
}

/** The most entries one list filter takes. */
export const MAX_FILTER_ENTRIES = 20;
/** Longest brand id or slug, subject type and subject id accepted in a filter. */
const MAX_BRAND = 128;
const MAX_SUBJECT_TYPE = 64;
const MAX_SUBJECT_ID = 128;

/** Every public event, of any brand and subject. */
export const ALL_EVENTS: EventFilter = build(undefined, undefined, undefined, undefined);

/** The parameter names each surface uses for the filter's dimensions (REST snake_case, GraphQL camelCase). */
export interface FilterParams {
  brands: string;
  subjectTypes: string;
  subjectId: string;
}
export const REST_PARAMS: FilterParams = { brands: 'brands', subjectTypes: 'subject_types', subjectId: 'subject_id' };
export const GRAPHQL_PARAMS: FilterParams = { brands: 'brands', subjectTypes: 'subjectTypes', subjectId: 'subjectId' };

/**
 * Validates and normalizes a filter. Bad values are `invalid_request` naming
 * `param` (empty or too long lists, empty or too long entries, NUL, wrong
 * types), unknown types `invalid_event_type`, and a brand that is not the
 * organization's `brand_not_found`, the same answer whether it exists in
 * another organization or nowhere.
 */
export async function parseEventFilter(
  deps: Deps,
  organizationId: string,
  input: EventFilterInput,
  params: FilterParams = REST_PARAMS,
  /** The transaction a caller runs in (a webhook endpoint's create or update): brand lookups read through it. */
  db?: Pick<Tx, 'brand'>,
): Promise<EventFilter> {
  const types = parseTypes(input);
  const brandEntries = list(input.brands, params.brands, MAX_BRAND);
  const subjectTypes = list(input.subject_types, params.subjectTypes, MAX_SUBJECT_TYPE);
  const subjectId = input.subject_id == null ? undefined : text(input.subject_id, params.subjectId, MAX_SUBJECT_ID);
  // No filter (the common page): the one prebuilt filter, not a new set of every public type.
  if (!types && !brandEntries && !subjectTypes && subjectId === undefined) return ALL_EVENTS;
  const brands = brandEntries && (await resolveBrands(deps, organizationId, brandEntries, params.brands, db));
  return build(types, brands, subjectTypes, subjectId);
}

/** Types keep their answers from before the other filters: anything that is not a public type (or a legacy spelling, on `types`) is invalid_event_type. */
function parseTypes(input: EventFilterInput): string[] | undefined {
  if (input.type != null) {
    if (typeof input.type !== 'string') throw new DomainError('invalid_request', 'type must be a string', 'type');
    assertPublicType(input.type);
    return [input.type];
  }
  // An empty `types` list means every type, as it always has (the newer lists refuse empty).
  if (input.types == null || input.types.length === 0) return undefined;
  if (!Array.isArray(input.types)) throw new DomainError('invalid_request', 'types must be a list of strings', 'types');
  const unknown = input.types.filter((e) => typeof e !== 'string' || canonicalEventType(e) === undefined);
  if (unknown.length) {
    throw new DomainError(
      'invalid_event_type',
      `Unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}. Public types: see GET /v1/platform/openapi.json`,
      'types',
    );
  }
  return input.types.map((e) => canonicalEventType(e)!);
}

/** A single public type (the feed's `type`, an operator event's type): anything else is invalid_event_type. */
export function assertPublicType(type: string | undefined, param = 'type'): void {
  if (type !== undefined && !isPublicEventType(type)) {
    throw new DomainError(
      'invalid_event_type',
      `Unknown event type: ${type}. The public types are the enum of \`type\` in GET /v1/platform/openapi.json`,
      param,
    );
  }
}

function text(v: unknown, param: string, max: number): string {
  if (typeof v !== 'string') throw new DomainError('invalid_request', `${param} must be a string`, param);
  if (v.length === 0 || v.length > max) throw new DomainError('invalid_request', `${param} entries must be 1 to ${max} characters`, param);
  if (!isStorableText(v))
    throw new DomainError('invalid_request', `${param} contains a NUL character (U+0000) or an unpaired UTF-16 surrogate`, param);
  return v;
}

function list(v: readonly unknown[] | null | undefined, param: string, maxLength: number): string[] | undefined {
  if (v == null) return undefined;
  if (!Array.isArray(v)) throw new DomainError('invalid_request', `${param} must be a list of strings`, param);
  if (v.length === 0) throw new DomainError('invalid_request', `${param} must not be empty (omit it to match every event)`, param);
  if (v.length > MAX_FILTER_ENTRIES)
    throw new DomainError('invalid_request', `${param} takes at most ${MAX_FILTER_ENTRIES} entries`, param);
  return v.map((e) => text(e, param, maxLength));
}

/**
 * Brand ids or slugs of the organization, as ids, through the same lookup as
 * `Service-Brand` (and its credential cache); any other entry is
 * brand_not_found naming `param`, the same whether it exists elsewhere or nowhere.
 */
export async function resolveBrands(
  deps: Deps,
  organizationId: string,
  entries: readonly string[],
  param: string,
  db?: Pick<Tx, 'brand'>,
): Promise<string[]> {
  const ids: string[] = [];
  for (const e of entries) {
    try {
      ids.push((await selectBrand(deps, organizationId, e, undefined, db)).id);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'brand_not_found') throw new DomainError('brand_not_found', err.message, param);
      throw err;
    }
  }
  return ids;
}

function norm(v: readonly string[] | undefined): string[] | undefined {
  return v ? [...new Set(v)].sort() : undefined;
}

function build(
  rawTypes: readonly string[] | undefined,
  rawBrands: readonly string[] | undefined,
  rawSubjectTypes: readonly string[] | undefined,
  subjectId: string | undefined,
): EventFilter {
  const types = norm(rawTypes);
  const brands = norm(rawBrands);
  const subjectTypes = norm(rawSubjectTypes);
  const typeSet = new Set(types ?? PUBLIC_EVENT_TYPES);
  const brandSet = brands && new Set(brands);
  const subjectTypeSet = subjectTypes && new Set(subjectTypes);
  return {
    types,
    brands,
    subjectTypes,
    subjectId,
    key: JSON.stringify([types ?? null, brands ?? null, subjectTypes ?? null, subjectId ?? null]),
    matches: (row) =>
      typeSet.has(row.type) &&
      (!brandSet || (row.brandId !== null && brandSet.has(row.brandId))) &&
      (!subjectTypeSet || subjectTypeSet.has(row.subjectType)) &&
      (subjectId === undefined || row.subjectId === subjectId),
  };
}

/** A filter already validated and stored (a webhook endpoint's): brand ids and subject types, either absent. */
export function storedEventFilter(brands: readonly string[] | undefined, subjectTypes: readonly string[] | undefined): EventFilter {
  return build(undefined, brands, subjectTypes, undefined);
}

/** REST list syntax: one comma-separated parameter (`brands=dev,second`); repeating a parameter is refused. */
export function splitList(v: unknown): unknown {
  return typeof v === 'string' ? v.split(',') : v;
}
