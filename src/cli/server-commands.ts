/**
 * The commands that run server code in this process: start, migrate,
 * bootstrap, reencrypt-credentials. Loaded lazily, so API commands do not pay for Prisma and PGlite.
 */
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { reencryptCredentials as reencrypt, type Reencryption } from '../domain/destination/destination.ts';
import { bootstrapIfEmpty } from '../domain/organization/bootstrap.ts';
import { createLogger } from '../logger.ts';

/** `platform start`: exactly `npm start`. */
export async function start(): Promise<void> {
  await import('../main.ts');
}

/** `platform migrate`: applies pending migrations to DATABASE_URL, or to the PGlite in DATA_DIR. */
export async function migrate(): Promise<{ database: string; applied: string[] }> {
  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    return { database: db.kind === 'pglite' ? `embedded PGlite in ${config.dataDir}` : 'PostgreSQL', applied: await db.migrate() };
  } finally {
    await db.close();
  }
}

/**
 * `platform bootstrap`: migrates, then on a database without organizations
 * creates the development organization and writes BOOTSTRAP_FILE, as
 * `npm start` does. The URLs written are those the server will answer on
 * (PUBLIC_ORIGIN, else HOST:PORT).
 */
export async function bootstrap(): Promise<{ file: string; created: boolean }> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const db = await openDatabase(config);
  try {
    await db.migrate();
    const origin = config.publicOrigin ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
    const urls = { base_url: `${origin}/api`, dashboard_base_url: origin, api_origin: origin, graphql_url: `${origin}/graphql` };
    // No sequencer runs here; the server numbers any committed events when it starts.
    const created = await bootstrapIfEmpty({ db, clock: systemClock, config, log, sequencer: { kick() {} } }, urls);
    return { file: config.bootstrapFile, created: created !== undefined };
  } finally {
    await db.close();
  }
}

/**
 * `platform reencrypt-credentials`: every stored credential (event destinations' broker URLs) re-encrypted under the
 * first key of ENCRYPTION_KEYS, on the database the server uses (docs/destinations.md, "Encryption keys").
 */
export async function reencryptCredentials(): Promise<Reencryption> {
  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    await db.migrate();
    return await reencrypt(db, config.encryptionKeys);
  } finally {
    await db.close();
  }
}
