import pg from 'pg';
import { expect, vi } from 'vitest';
import { appendEvent } from '../../src/domain/event/event.ts';
import { EVENTS_CHANNEL, SEQUENCER_LOCK_KEY } from '../../src/runtime/sequencer.ts';
import { onPostgres } from '../support/database.ts';
import { waitUntil } from '../support/stream-client.ts';
import { appTest, type TestApp, buildTenant } from '../support/kit.ts';
import { seqsAndPositions } from '../support/db-access.ts';

/**
 * The sequencer on the SQL port: one batch numbers the pending events of
 * every organization at once, and on PostgreSQL the whole batch (BEGIN, the
 * advisory lock, the numbering, its NOTIFY, COMMIT) is one round trip.
 */
const test = appTest();
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

async function appendIn(organizationId: string, n: number) {
  await t.app.deps.db.transaction(async (tx) => {
    for (let i = 0; i < n; i++)
      await appendEvent(t.app.deps, tx, {
        test: true,
        organizationId,
        type: 'assertion.created',
        subject: { type: 'entity', id: `ent_${i}` },
        data: { i },
      });
  });
}

const seqs = (organizationId: string) => seqsAndPositions(t, organizationId);

test('one batch numbers pending events of two organizations, each densely from its own maximum in position order', async ({ app: t }) => {
  const a = await buildTenant(t, ['events:read']);
  const b = await buildTenant(t, ['events:read']);
  await t.app.sequencer.flush();
  // Committed without waking the sequencer in between: the next batch finds both organizations' rows pending.
  const kick = vi.spyOn(t.app.sequencer, 'kick').mockImplementation(() => {});
  try {
    await appendIn(a.org.id, 3);
    await appendIn(b.org.id, 2);
    await appendIn(a.org.id, 2);
  } finally {
    kick.mockRestore();
  }
  await t.app.sequencer.flush();
  const [sa, sb] = [await seqs(a.org.id), await seqs(b.org.id)];
  expect(sa.map(([s]) => s)).toEqual([1, 2, 3, 4, 5]);
  expect(sb.map(([s]) => s)).toEqual([1, 2]);
  for (const rows of [sa, sb]) for (let i = 1; i < rows.length; i++) expect(BigInt(rows[i]![1]!)).toBeGreaterThan(BigInt(rows[i - 1]![1]!));
});

test.skipIf(!onPostgres())('on PostgreSQL a batch is one round trip and sends one NOTIFY carrying its highest position', async () => {
  const org = await buildTenant(t, ['events:read']);
  await t.app.sequencer.flush();
  const listener = new pg.Client({ connectionString: t.app.deps.config.databaseDirectUrl ?? t.app.deps.config.databaseUrl });
  const payloads: string[] = [];
  listener.on('notification', (n) => payloads.push(n.payload ?? ''));
  await listener.connect();
  await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
  const kick = vi.spyOn(t.app.sequencer, 'kick').mockImplementation(() => {});
  try {
    await appendIn(org.org.id, 4);
  } finally {
    kick.mockRestore();
  }
  const spy = vi.spyOn(pg.Client.prototype, 'query');
  try {
    await t.app.sequencer.flush();
    // A query is a string, a config, or the SQL port's pipelined batch (its statements' text and values).
    const calls = spy.mock.calls.map(([q]) =>
      typeof q === 'string' ? { text: q, values: [] } : (q as unknown as { text: string; values?: unknown[] }),
    );
    // Every round trip of the sequencer's names its lock key or its numbering: exactly one, holding the whole transaction.
    const batches = calls.filter(
      (q) => q.text.includes('event_position_seq') || JSON.stringify(q.values ?? []).includes(String(SEQUENCER_LOCK_KEY)),
    );
    expect(batches).toHaveLength(1);
    expect(batches[0]!.text).toMatch(/^BEGIN;\nSELECT pg_advisory_xact_lock[\s\S]*event_position_seq[\s\S]*pg_notify[\s\S]*;\nCOMMIT$/);
  } finally {
    spy.mockRestore();
  }
  const max = (await seqs(org.org.id)).at(-1)![1];
  await waitUntil(() => payloads.includes(String(max)), 'the batch NOTIFY');
  expect(payloads).toEqual([String(max)]);
  await listener.end();
});
