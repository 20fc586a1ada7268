import { expect } from 'vitest';
import type { HttpResponse } from './http.ts';

/** A Surface A / dashboard / operator ErrorResponse: `{ error, message, request_id }`, never a stack trace. */
export function expectErrorResponse(res: HttpResponse, status: number, error?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type') ?? '').toMatch(/application\/json/);
  expect(res.body, res.text).toMatchObject({ error: expect.any(String), message: expect.any(String), request_id: expect.stringMatching(/^req_/) });
  expect(res.body.request_id).toBe(res.headers.get('request-id'));
  if (error) expect(res.body.error, res.text).toBe(error);
  expect(res.text).not.toMatch(/\bat .+\.(ts|js):\d+/); // no stack frames
}
