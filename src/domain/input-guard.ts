import { DomainError } from './errors.ts';

/**
 * What every transport checks once, at its input boundary, before any other
 * code sees the input (REST: rest/http/input-guard.ts and readJsonBody;
 * GraphQL: src/graphql/input-guard.ts).
 *
 * - Text must be storable: PostgreSQL refuses U+0000 in `text` and `jsonb`,
 *   and a lone UTF-16 surrogate has no UTF-8 form (it would be stored as
 *   U+FFFD, a silent change of the caller's data). Surrogate pairs (emoji)
 *   are ordinary characters and pass.
 * - Structures are at most MAX_INPUT_DEPTH deep. Canonicalization (the
 *   idempotency fingerprint), validation and JSON columns recurse; bounding
 *   depth here, with an iterative walk, keeps every later recursion shallow.
 *   Size is bounded earlier still, by the body limit (BODY_LIMIT_BYTES) on
 *   REST and GraphQL bodies alike.
 * - Every string, object key and array is bounded, whatever its field's own
 *   schema says (a field's schema may bound it tighter): the OpenAPI
 *   documents declare these bounds on every input that has none of its own
 *   (rest/http/openapi.ts), so what they promise is what is enforced.
 */
export const MAX_INPUT_DEPTH = 32;
/** Characters of any input string (the longest field, a unit's caption, is 10,000). */
export const MAX_INPUT_STRING = 10_000;
/** Characters of an object key in free-form input (event data, provider config, a JWK). */
export const MAX_INPUT_KEY = 255;
/** Entries of any input array (the largest, a measurement batch, is 500). */
export const MAX_INPUT_ITEMS = 1_000;

const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const isStorableText = (s: string) => !UNSTORABLE.test(s);

interface Frame {
  value: unknown;
  depth: number;
  key: string | number | null;
  parent: Frame | null;
}

/** `data.note`, `enabled_events.2`: the same dotted form as schema validation errors (parseInput). */
function paramOf(frame: Frame | null, maxKeys = Infinity): string | null {
  const keys: (string | number)[] = [];
  for (let f = frame; f; f = f.parent) if (f.key !== null) keys.push(f.key);
  return keys.length ? keys.reverse().slice(0, maxKeys).join('.') : null;
}

const unstorable = (param: string | null, inKey: boolean) =>
  new DomainError(
    'invalid_request',
    `${param ?? 'The input'} ${inKey ? 'has a key that contains' : 'contains'} a NUL character (U+0000) or an unpaired UTF-16 surrogate, which cannot be stored`,
    param,
  );

const tooLong = (param: string | null, what: string) => new DomainError('invalid_request', `${param ?? 'The input'} ${what}`, param);

/**
 * Throws `invalid_request` naming the first offending field: unstorable text
 * in a string or a key, or nesting deeper than MAX_INPUT_DEPTH. `root`
 * prefixes the field path (a GraphQL variable's name).
 */
export function guardInput(value: unknown, root: string | null = null): void {
  const stack: Frame[] = [{ value, depth: 0, key: root, parent: null }];
  while (stack.length) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === 'string') {
      if (!isStorableText(v)) throw unstorable(paramOf(frame), false);
      if (v.length > MAX_INPUT_STRING) throw tooLong(paramOf(frame), `is longer than ${MAX_INPUT_STRING} characters`);
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    const depth = frame.depth + 1;
    if (depth > MAX_INPUT_DEPTH) {
      // The field (or GraphQL variable) that holds the deep value, not a path 32 keys long.
      const param = paramOf(frame, 1);
      throw new DomainError('invalid_request', `${param ?? 'The input'} is nested more than ${MAX_INPUT_DEPTH} levels deep`, param);
    }
    if (Array.isArray(v)) {
      if (v.length > MAX_INPUT_ITEMS) throw tooLong(paramOf(frame), `has more than ${MAX_INPUT_ITEMS} entries`);
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth, key: i, parent: frame });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      // The offending key itself is never echoed back: the parent names the place.
      if (!isStorableText(key)) throw unstorable(paramOf(frame), true);
      if (key.length > MAX_INPUT_KEY) throw tooLong(paramOf(frame), `has a key longer than ${MAX_INPUT_KEY} characters`);
      stack.push({ value: (v as Record<string, unknown>)[key], depth, key, parent: frame });
    }
  }
}
