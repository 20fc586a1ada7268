import { httpStatus } from '../../src/http/error-status.ts';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { DomainError } from '../../src/domain/errors.ts';
import { envelopeKindOf, errorBody } from './envelope.ts';
import { newRequestId } from '../../src/domain/id.ts';
import type { Refusal } from '../../src/http/server-limits.ts';

/**
 * Requests Node's HTTP parser refuses before any handler runs: headers over
 * the size limit (431), a request or its headers too slow (408), bytes that
 * are not HTTP (400). Node's own answer is a bare status line; this one is the
 * envelope of the path the request line names (Surface B under `/v1/`,
 * ErrorResponse elsewhere) with a Request-Id, as every other error, and the
 * connection is closed after it, as Node does.
 */
export function answerClientError(log: Logger) {
  return (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void => {
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const error =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new DomainError('request_header_fields_too_large', 'The request line and headers exceed 16 KiB')
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new DomainError('request_timeout', 'The request did not arrive in time')
          : new DomainError('invalid_request', 'The request is not valid HTTP/1.1');
    // The client's doing, never a server fault: debug, so a flood of bad requests is not a flood of error logs.
    log.debug({ err: { code: err.code, message: err.message } }, 'request refused by the HTTP parser');
    const requestId = newRequestId();
    const path = /^[A-Z]+ (\S+)/.exec(err.rawPacket?.subarray(0, 2048).toString('latin1') ?? '')?.[1] ?? '/';
    const body = JSON.stringify(errorBody(envelopeKindOf(path), error, requestId));
    socket.end(
      `HTTP/1.1 ${httpStatus(error)} ${STATUS_TEXT[httpStatus(error)]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  };
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/**
 * The 503 of a connection refused for its budget or its address's share (src/http/server-limits.ts), in the
 * envelope of the path it asked for (`/` when refused before asking: Surface A's), with a Request-Id; GraphQL's
 * error shape on `/graphql`, like the refusal of an SSE stream there. The server adds Retry-After and closes.
 */
export function overCapacity(path: string): Refusal {
  const requestId = newRequestId();
  const error = new DomainError('service_unavailable', 'Too many connections from this address or to this server; retry later');
  const body =
    path.split('?')[0] === '/graphql'
      ? { errors: [{ message: error.message, extensions: { code: error.code, request_id: requestId } }] }
      : errorBody(envelopeKindOf(path), error, requestId);
  return { headers: { 'Content-Type': 'application/json; charset=utf-8', 'Request-Id': requestId }, body: JSON.stringify(body) };
}
