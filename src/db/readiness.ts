/**
 * Readiness of the database (/readyz): it answers a query and, once a storage
 * fault was seen, it accepts writes again.
 *
 * A full or failing disk leaves reads working, so `select 1` alone keeps
 * answering ready while every write fails. The error mapping reports each
 * storage fault it answers (`storageFault()`); from then on readiness proves
 * the disk with a real write until one succeeds, and so recovers by itself
 * once space returns, with no restart and no write from a client. The write
 * is one the disk must take: a table created and given a row in a transaction
 * that is rolled back (`probe`), which extends a new relation file in the
 * database's default tablespace (a page written to the file system at once on
 * PostgreSQL and on PGlite's NODEFS alike; a temp table's local buffers, or an
 * update in a page with room, would not touch the disk). It runs only while a
 * fault stands (it churns the catalogue, which PGlite never vacuums) and once
 * at a time: concurrent probes of /readyz share it.
 */
export interface Readiness {
  /** Resolves when ready; rejects with what the database answered otherwise. */
  ready(): Promise<void>;
  /** A write failed for lack of storage: readiness proves writes from now on until one succeeds. */
  storageFault(): void;
}

export function readiness(ping: () => Promise<void>, probe: () => Promise<void>): Readiness {
  let faulted = false;
  let probing: Promise<void> | undefined;
  const probeOnce = () =>
    (probing ??= probe()
      .then(() => {
        faulted = false;
      })
      .finally(() => {
        probing = undefined;
      }));
  return {
    ready: async () => {
      await ping();
      if (faulted) await probeOnce();
    },
    storageFault: () => {
      faulted = true;
    },
  };
}

/** The probe's statements, between a BEGIN and a ROLLBACK the caller sends. */
export const PROBE_WRITE = 'CREATE TABLE readiness_probe (written boolean); INSERT INTO readiness_probe VALUES (true)';
