import type { Context } from 'koa';
import { DomainError } from '../../src/domain/errors.ts';
import { guardInput } from '../../src/domain/input-guard.ts';
import { bearerOf, readBodyText } from '../../src/http/request-body.ts';

/**
 * Reads a JSON request body with a size limit. No body is `undefined`; a body
 * that is not JSON, is malformed, too large, too deep or holds unstorable
 * text is a clear 4xx. Every REST body is read here.
 */
export async function readJsonBody(ctx: Context, limitBytes: number): Promise<unknown> {
  const length = ctx.request.length;
  const chunked = ctx.get('transfer-encoding') !== '';
  if (!length && !chunked) return undefined;
  if (!isJson(ctx)) {
    throw new DomainError('unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json)');
  }
  const text = await readBodyText(ctx.req, length, limitBytes);
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

/** The two spellings nearly every client sends, answered without parsing the media type; anything else goes to `ctx.is`. */
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8']);
const isJson = (ctx: Context) => PLAIN_JSON.has(ctx.get('content-type')) || Boolean(ctx.is('application/json', '+json'));

/** The bearer credential of `Authorization`, `null` when the header is absent, `''` when it is not a bearer. */
export function bearer(ctx: Context): string | null {
  return bearerOf(ctx.get('authorization'));
}
