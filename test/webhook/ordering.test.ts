import { expect } from 'vitest';
import { appendEvent } from '../../src/domain/event/event.ts';
import { buildTenant, type TestApp } from '../support/kit.ts';
import { createEndpoint, deliveryTest, listDeliveries, settle, type Received } from './receiver.ts';

/**
 * Ordered delivery per subject (`ordering: "subject"`): deliveries of one subject reach the endpoint one at a time in
 * `seq` order (a failing one holds back the later ones of its subject only); other subjects proceed. A long schedule
 * of 1 s retries, so random failures never exhaust a delivery here.
 */
const { test, ctx } = deliveryTest({ retryScheduleMs: [0, ...Array.from({ length: 30 }, () => 1000)] });
const SCOPES = ['webhooks:read', 'webhooks:write'];

/** Appends one event per subject id, in this order, in one transaction, and sequences them. */
async function emitFor(t: TestApp, organizationId: string, subjects: string[]) {
  const { deps } = t.app;
  await deps.db.transaction(async (tx) => {
    for (const [i, id] of subjects.entries())
      await appendEvent(deps, tx, { test: true, organizationId, type: 'assertion.created', subject: { type: 'entity', id }, data: { i } });
  });
  await t.app.sequencer.flush();
}

const parsed = (r: Received) => JSON.parse(r.body) as { seq: number; subject: { id: string } };

/** A deterministic PRNG (mulberry32), so a failing run can be replayed from its seed. */
function seeded(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

test('ordering is shown on the endpoint (default none), set on create and update, on REST and GraphQL', async () => {
  const { t } = ctx;
  const { token } = await buildTenant(t, SCOPES);
  const plain = await createEndpoint(t, token, { url: 'https://a.example/hook' });
  expect((plain as any).ordering).toBe('none');
  const ordered = await createEndpoint(t, token, { url: 'https://a.example/hook', ordering: 'subject' });
  expect((ordered as any).ordering).toBe('subject');
  const g = await t.http.graphql(`mutation { updateWebhookEndpoint(id: "${plain.id}", ordering: SUBJECT) { ordering } }`, {}, { token });
  expect(g.body.data.updateWebhookEndpoint.ordering).toBe('SUBJECT');
  const bad = await t.http.post('/v1/platform/webhook_endpoints', { url: 'https://a.example/hook', ordering: 'seq' }, { token });
  expect(bad.status).toBe(400);
  expect(bad.body.error.param).toBe('ordering');
});

test('a failing delivery holds back the later ones of its subject only; they follow in seq order once it succeeds', async () => {
  const { t, rx } = ctx;
  const { org, token } = await buildTenant(t, SCOPES);
  let failA = true;
  const path = '/ordered-hol';
  // The receiver records a request before answering it: the last one recorded is this one.
  rx.on(path, (_req, res) => {
    res.statusCode = failA && parsed(rx.for(path).at(-1)!).subject.id === 'A' ? 500 : 200;
    res.end();
  });
  await createEndpoint(t, token, { url: rx.url(path), ordering: 'subject' });
  await emitFor(t, org.id, ['A', 'B', 'A', 'B', 'A']);
  await settle(t);
  const seqsOf = (subject: string) =>
    rx
      .for(path)
      .map(parsed)
      .filter((e) => e.subject.id === subject)
      .map((e) => e.seq);
  const [a1] = seqsOf('A');
  expect(seqsOf('A')).toEqual([a1]); // A's first failed: A's later two wait
  expect(seqsOf('B')).toEqual([a1! + 1, a1! + 3]); // B went on, in order
  t.clock.advance(1200);
  await settle(t);
  expect(seqsOf('A')).toEqual([a1, a1]); // retried, failed again, still alone
  failA = false;
  t.clock.advance(1200);
  await settle(t);
  expect(seqsOf('A')).toEqual([a1, a1, a1, a1! + 2, a1! + 4]);
});

test('under random receiver failures, each subject is received in seq order and every delivery arrives', async () => {
  const { t, rx } = ctx;
  for (const seed of [1, 2, 3]) {
    const { org, token } = await buildTenant(t, SCOPES);
    const path = `/ordered-random-${seed}`;
    const random = seeded(seed);
    rx.on(path, (_req, res) => {
      res.statusCode = random() < 0.35 ? 503 : 200;
      res.end();
    });
    const ep = await createEndpoint(t, token, { url: rx.url(path), ordering: 'subject' });
    const subjects = Array.from({ length: 40 }, () => ['s1', 's2', 's3', 's4'][Math.floor(random() * 4)]!);
    await emitFor(t, org.id, subjects);
    const succeeded = async () => (await listDeliveries(t, token, ep.id, '?limit=100&status=succeeded')).length;
    for (let round = 0; round < 40 && (await succeeded()) < subjects.length; round++) {
      t.clock.advance(1100);
      await settle(t);
    }
    expect(await succeeded(), `seed ${seed}`).toBe(subjects.length);
    const events = rx.for(path).map(parsed);
    const first = Math.min(...events.map((e) => e.seq));
    for (const subject of new Set(subjects)) {
      const seqs = events.filter((e) => e.subject.id === subject).map((e) => e.seq);
      // Every attempt of a subject (retries included) is at or after the previous one's seq: never a later event first.
      expect(seqs, `seed ${seed}, subject ${subject}`).toEqual([...seqs].sort((a, b) => a - b));
      expect([...new Set(seqs)], `seed ${seed}, subject ${subject}`).toEqual(
        subjects.flatMap((s, i) => (s === subject ? [first + i] : [])),
      );
    }
  }
});
