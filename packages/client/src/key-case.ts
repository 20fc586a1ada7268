/**
 * The wire speaks snake_case; the client library speaks camelCase. Both
 * conversions are deep and touch keys only, never values (event types,
 * scope names and ids pass through untouched).
 *
 * Decision: event `data` is camelCased too. The spec says the client
 * camelCases every response key and that the feed and webhook verification
 * expose the same shape, so `data.previous_status` reads `data.previousStatus`
 * everywhere in the client. Callers who need the raw payload use the HTTP
 * body (or `toSnakeCase`, which inverts it for snake_case keys).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function camelKey(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function snakeKey(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function mapKeys(value: unknown, rename: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => mapKeys(v, rename));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[rename(k)] = mapKeys(v, rename);
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function toCamelCase<T = any>(value: unknown): T {
  return mapKeys(value, camelKey) as T;
}

export function toSnakeCase<T = any>(value: unknown): T {
  return mapKeys(value, snakeKey) as T;
}
