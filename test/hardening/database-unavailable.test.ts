import { httpStatus } from '../../src/http/error-status.ts';
import { describe, expect, it } from 'vitest';
import { databaseUnavailable } from '../../src/domain/errors.ts';

/**
 * What a restarting or unreachable PostgreSQL looks like by the time it
 * reaches a request, in each wrapping the drivers use: every shape is 503
 * `service_unavailable`, and a real fault stays unclassified (a 500).
 * (The chaos suite proves the same end to end with a real restart.)
 */
const err = (props: Record<string, unknown>) => Object.assign(new Error(String(props.message ?? 'x')), props);

describe('database unavailable', () => {
  const down: [string, unknown][] = [
    ['SQLSTATE 57P01 (terminating connection due to administrator command)', err({ code: '57P01' })],
    ['SQLSTATE 57P03 (starting up)', err({ code: '57P03' })],
    ['SQLSTATE 08006 (connection failure)', err({ code: '08006' })],
    ['SQLSTATE 53300 (too many connections)', err({ code: '53300' })],
    ['socket ECONNREFUSED', err({ code: 'ECONNREFUSED' })],
    ['Prisma P1001 (cannot reach)', err({ code: 'P1001' })],
    ['Prisma P2024 (pool timeout)', err({ code: 'P2024' })],
    ['pg: connection lost mid-query', err({ message: 'Connection terminated unexpectedly' })],
    ['pg: client after a connection error', err({ message: 'Client has encountered a connection error and is not queryable' })],
    ['pg pool: connect timeout', err({ message: 'timeout exceeded when trying to connect' })],
    [
      'adapter kind ConnectionClosed in meta',
      err({ code: 'P2010', meta: { driverAdapterError: err({ cause: { kind: 'ConnectionClosed' } }) } }),
    ],
    ['adapter kind DatabaseNotReachable as cause', err({ cause: { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5432 } })],
    ['wrapped message', err({ message: 'Invalid `prisma.event.create()` invocation: the database system is shutting down' })],
  ];
  it.each(down)('%s is 503 service_unavailable with Retry-After', (_name, e) => {
    const mapped = databaseUnavailable(e);
    expect(mapped?.code).toBe('service_unavailable');
    expect(mapped && httpStatus(mapped)).toBe(503);
    expect(mapped?.details.retry_after).toBe(1);
  });

  const faults: [string, unknown][] = [
    ['unique violation', err({ code: '23505' })],
    ['syntax error', err({ code: '42601' })],
    ['Prisma record not found', err({ code: 'P2025' })],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'id')")],
  ];
  it.each(faults)('%s is not classified as unavailable', (_name, e) => {
    expect(databaseUnavailable(e)).toBeUndefined();
  });
});
