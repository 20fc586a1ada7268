import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import { DomainError } from '../domain/errors.ts';

/**
 * Reads a request body as text within `limitBytes` (REST and GraphQL alike):
 * too large is `payload_too_large`, a body that cannot be read (an aborted
 * upload, a bad length) is `invalid_request`; each front renders the error
 * in its own envelope.
 */
export async function readBodyText(req: IncomingMessage, length: number | undefined, limitBytes: number): Promise<string> {
  try {
    return await getRawBody(req, { length, limit: limitBytes, encoding: 'utf8' });
  } catch (e) {
    if ((e as { type?: string }).type === 'entity.too.large')
      throw new DomainError('payload_too_large', `Request body exceeds ${limitBytes} bytes`);
    throw new DomainError('invalid_request', 'Could not read the request body');
  }
}

/** The credential of an `Authorization: Bearer …` header: `null` when the header is absent, `''` when it is not a bearer. */
export function bearerOf(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : '';
}
