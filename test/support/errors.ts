import { expect } from 'vitest';
import type { HttpResponse } from './http.ts';

/**
 * One assertion per error envelope. Each checks the status, the envelope's
 * exact keys, the code, that `request_id` echoes the Request-Id header, and
 * that no stack trace or source path leaks.
 */
const LEAK = /\n\s+at \S|\bat .+\.(ts|js):\d+|\(\S+:\d+:\d+\)|node_modules|file:\/\/|\.ts:\d+|"stack"/i;

/** Surface A, dashboard and operator: `{ error, message, request_id[, param, required_scope] }`. */
export function expectErrorResponse(res: HttpResponse, status: number, error?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type') ?? '').toMatch(/application\/json/);
  expect(res.body, res.text).toMatchObject({
    error: expect.any(String),
    message: expect.any(String),
    request_id: expect.stringMatching(/^req_/),
  });
  expect(res.body.request_id).toBe(res.headers.get('request-id'));
  if (error) expect(res.body.error, res.text).toBe(error);
  expect(
    Object.keys(res.body).every((k) => ['error', 'message', 'required_scope', 'param', 'request_id'].includes(k)),
    res.text,
  ).toBe(true);
  expect(res.text).not.toMatch(LEAK);
}

/** Surface B (`/v1/platform/*`): `{ error: { code, message, param, request_id } }`; `param` checked when given (null included). */
export function expectPlatformError(res: HttpResponse, status: number, code: string, param?: string | null): void {
  expect(res.status, res.text).toBe(status);
  expect(Object.keys(res.body ?? {}), res.text).toEqual(['error']);
  expect(Object.keys(res.body.error).sort(), res.text).toEqual(['code', 'message', 'param', 'request_id']);
  expect(res.body.error.code, res.text).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.param === null || typeof res.body.error.param === 'string', res.text).toBe(true);
  if (param !== undefined) expect(res.body.error.param, res.text).toBe(param);
  expect(res.body.error.request_id).toMatch(/^req_/);
  expect(res.body.error.request_id).toBe(res.headers.get('request-id'));
  expect(res.text).not.toMatch(LEAK);
}

/**
 * GraphQL over HTTP: one error whose `extensions.code` is `code` (and whose
 * request_id echoes the header), no data, never a 5xx; `status` checked when
 * given. Returns the error, for further checks (`extensions.param`…).
 */
export function expectGraphQLError(
  res: HttpResponse,
  code: string,
  status?: number,
): { message: string; extensions: Record<string, any>; path?: unknown[] } {
  if (status !== undefined) expect(res.status, res.text).toBe(status);
  expect(res.status, res.text).toBeLessThan(500);
  expect(res.body?.data ?? null, res.text).toBeNull();
  expect(res.body.errors, res.text).toHaveLength(1);
  expect(res.body.errors[0].extensions, res.text).toMatchObject({ code, request_id: res.headers.get('request-id') });
  expect(res.text).not.toMatch(LEAK);
  return res.body.errors[0];
}
