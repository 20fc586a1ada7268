import { z } from 'zod';
import { DomainError } from './errors.ts';

/**
 * Validates transport input against a domain schema. The first problem
 * becomes a 400 `invalid_request` naming the parameter, in the caller's
 * words (unknown keys are named too: strict schemas catch typos).
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  let path = issue.path.map(String).join('.');
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    path = [...issue.path.map(String), issue.keys[0]].filter(Boolean).join('.');
    message = `Unknown parameter${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`;
  } else if (path) {
    message = `Invalid ${path}: ${message}`;
  }
  throw new DomainError('invalid_request', message, path || null);
}

/** RFC 3339 timestamp with an explicit offset, parsed to a Date. */
export const timestamp = () =>
  z.iso.datetime({ offset: true, message: 'expected an RFC 3339 date-time, e.g. 2030-01-01T00:00:00Z' }).transform((s) => new Date(s));
