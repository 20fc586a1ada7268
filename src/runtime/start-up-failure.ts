import { DataDirInUseError } from '../db/data-dir-lock.ts';

/**
 * What an operator reads when the server cannot start: one line that names the cause and the setting to change (a
 * short list for several invalid settings), never a stack trace, which `LOG_LEVEL=debug` adds. The causes are the
 * ones a deployment meets: the data directory or the port taken, a bad setting, PostgreSQL unreachable or refusing.
 */
export function startUpFailure(err: unknown, settings: { databaseUrl?: string; metricsPort?: number } = {}): string {
  const { databaseUrl } = settings;
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (err instanceof DataDirInUseError) return err.message;
  if (e?.message?.startsWith('Invalid configuration:')) return e.message;
  if (e?.code === 'EADDRINUSE' && e.syscall === 'listen') {
    const setting = settings.metricsPort !== undefined && e.port === settings.metricsPort ? 'METRICS_LISTEN' : 'PORT (or HOST)';
    return `port ${e.port} on ${e.address} is in use by another process; stop it or set ${setting}`;
  }
  if (databaseUrl && e?.code) {
    const at = postgresAt(databaseUrl);
    if (UNREACHABLE.has(e.code)) return `PostgreSQL at ${at} is unreachable (${e.code}); check DATABASE_URL`;
    // SQLSTATE class 28: bad user or password; 3D000: no such database.
    if (e.code.startsWith('28') || e.code === '3D000')
      return `PostgreSQL at ${at} refused the connection: ${e.message} (${e.code}); check DATABASE_URL`;
  }
  return `start-up failed: ${e?.message || String(err)}`;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

/** host:port/database from DATABASE_URL, without its credentials. */
function postgresAt(databaseUrl: string): string {
  try {
    const u = new URL(databaseUrl);
    return `${u.hostname || 'localhost'}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}
