import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { DomainError } from '../../src/domain/errors.ts';
import { guardInput } from '../../src/domain/input-guard.ts';

/**
 * Reads a JSON request body with a size limit. No body is `undefined`; a body
 * that is not JSON, is malformed, too large, too deep or holds unstorable
 * text is a clear 4xx. Every REST body is read here.
 */
export async function readJsonBody(ctx: Context, limitBytes: number): Promise<unknown> {
  const length = ctx.request.length;
  const chunked = ctx.get('transfer-encoding') !== '';
  if (!length && !chunked) return undefined;
  if (!ctx.is('application/json', '+json')) {
    throw new DomainError('unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json)');
  }
  let text: string;
  try {
    text = await getRawBody(ctx.req, { length, limit: limitBytes, encoding: 'utf8' });
  } catch (e) {
    const type = (e as { type?: string }).type;
    if (type === 'entity.too.large') throw new DomainError('payload_too_large', `Request body exceeds ${limitBytes} bytes`);
    throw new DomainError('invalid_request', 'Could not read the request body');
  }
  if (text.trim() === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new DomainError('invalid_request', 'Malformed JSON in request body');
  }
  guardInput(body);
  return body;
}

/** The bearer credential of `Authorization`, `null` when the header is absent, `''` when it is not a bearer. */
export function bearer(ctx: Context): string | null {
  const h = ctx.get('authorization');
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1]! : '';
}
