import { httpStatus } from '../../src/http/error-status.ts';
import { describe, expect, it } from 'vitest';
import { databaseUnavailable } from '../../src/domain/errors.ts';

/**
 * What a restarting or unreachable PostgreSQL looks like by the time it
 * reaches a request, in each wrapping the drivers use: every shape is 503
 * `service_unavailable`, and so is a database that cannot store data (a
 * full or failing disk); a real fault stays unclassified (a 500).
 * (The chaos suite proves the same end to end with a real restart.)
 */
const err = (props: Record<string, unknown>) => Object.assign(new Error(String(props.message ?? 'x')), props);

describe('database unavailable', () => {
  const down: [string, unknown][] = [
    ['SQLSTATE 57P01 (terminating connection due to administrator command)', err({ code: '57P01' })],
    ['SQLSTATE 57P03 (starting up)', err({ code: '57P03' })],
    ['SQLSTATE 08006 (connection failure)', err({ code: '08006' })],
    ['SQLSTATE 53300 (too many connections)', err({ code: '53300' })],
    [
      'SQLSTATE 25006 (a write reached a standby mid-failover) via Prisma and the adapter',
      err({
        code: 'P2039',
        meta: {
          driverAdapterError: err({
            cause: { originalCode: '25006', kind: 'postgres', code: '25006', message: 'cannot execute INSERT in a read-only transaction' },
          }),
        },
      }),
    ],
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
    expect(mapped?.details).toEqual({ retry_after: 1, fault: 'unreachable' });
  });

  /**
   * Storage faults, in the shapes they reach a request (observed on a full
   * tmpfs): Prisma's P2039 with the driver adapter's SQLSTATE, PGlite's and
   * node-postgres's DatabaseError, a raw file system error, PGlite's wasm
   * ErrnoError (Emscripten's errno numbers). 503 with a longer Retry-After,
   * and marked as a storage fault for /readyz (never serialized).
   */
  const adapterError = (code: string, message: string) =>
    err({
      code: 'P2039',
      message: `Invalid \`prisma.unit.create()\` invocation: Database error. Code: \`${code}\`. Message: \`${message}\``,
      meta: { modelName: 'Unit', driverAdapterError: err({ cause: { originalCode: code, kind: 'postgres', code, message } }) },
    });
  const storage: [string, unknown][] = [
    [
      'SQLSTATE 53100 disk_full via Prisma and the adapter',
      adapterError('53100', 'could not extend file "base/5/16398": No space left on device'),
    ],
    [
      'SQLSTATE 53100 disk_full (PGlite, pg)',
      err({ code: '53100', message: 'could not write to file "pg_wal/xlogtemp.42": No space left on device' }),
    ],
    ['SQLSTATE 53000 insufficient_resources', err({ code: '53000' })],
    ['SQLSTATE 53200 out_of_memory', err({ code: '53200' })],
    ['SQLSTATE 53400 configuration_limit_exceeded', err({ code: '53400' })],
    ['SQLSTATE 58030 io_error', adapterError('58030', 'could not read block 0 in file "base/5/16398": Input/output error')],
    ['SQLSTATE 42501 with EROFS in words', err({ code: '42501', message: 'could not open file "base/5/1": Read-only file system' })],
    ['SQLSTATE XX000 with EDQUOT in words', err({ code: 'XX000', message: 'could not extend file "base/5/1": Disk quota exceeded' })],
    ['errno ENOSPC', err({ code: 'ENOSPC', errno: -28, syscall: 'write' })],
    ['errno EIO', err({ code: 'EIO' })],
    ['errno EROFS', err({ code: 'EROFS' })],
    ['errno EDQUOT', err({ code: 'EDQUOT' })],
    ['wasm FS ErrnoError ENOSPC (51)', err({ name: 'ErrnoError', errno: 51 })],
    ['wasm FS ErrnoError EIO (29)', err({ name: 'ErrnoError', errno: 29 })],
    ['wasm FS ErrnoError EROFS (69)', err({ name: 'ErrnoError', errno: 69 })],
    ['wasm FS ErrnoError EDQUOT (19)', err({ name: 'ErrnoError', errno: 19 })],
  ];
  it.each(storage)('%s is 503 service_unavailable with Retry-After, a storage fault', (_name, e) => {
    const mapped = databaseUnavailable(e);
    expect(mapped?.code).toBe('service_unavailable');
    expect(mapped && httpStatus(mapped)).toBe(503);
    expect(mapped?.details).toEqual({ retry_after: 5, fault: 'storage' });
  });

  const faults: [string, unknown][] = [
    ['unique violation', err({ code: '23505' })],
    ['syntax error', err({ code: '42601' })],
    ['Prisma record not found', err({ code: 'P2025' })],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['permission denied without a file system in words', err({ code: '42501', message: 'permission denied for table unit' })],
    ['wasm FS ErrnoError ENOENT (44)', err({ name: 'ErrnoError', errno: 44 })],
  ];
  it.each(faults)('%s is not classified as unavailable', (_name, e) => {
    expect(databaseUnavailable(e)).toBeUndefined();
  });
});
