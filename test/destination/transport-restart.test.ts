import { Redis } from 'ioredis';
import { connect } from 'nats';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { DestinationMessage, DestinationTarget, DestinationType } from '../../src/domain/destination/transport.ts';
import { createTransports } from '../../src/domain/destination/transports/index.ts';
import { ownBroker, type OwnBroker } from '../support/brokers.ts';
import { onPostgres } from '../support/database.ts';
import { durableQueue, expectSignedAsSent, POLICY, signedMessage, takeAll, target } from './transport-helpers.ts';

/**
 * A broker killed mid-stream (its whole process group, as a crash) and started again after a short outage, on its
 * own ports and data directory (never the run's shared brokers): every message a transport reported accepted is
 * still there (lost 0), the ones retried across the outage may be there twice (counted), and the transport
 * reconnects by itself once the broker is back. Publishers retry a failed attempt after a short pause, as the
 * engine's retry schedule does.
 */
const brokers = inject('brokers');
const COUNT = 300;
const IN_FLIGHT = 8;
const OUTAGE_MS = 1000;
/** How long publishers retry in all: a broker's restart (RabbitMQ's is the slowest, up to 60 s on a loaded machine) and the rest. */
const RETRY_FOR_MS = 150_000;
const owned: OwnBroker[] = [];
afterAll(() => Promise.all(owned.map((b) => b.remove())));

interface Run {
  sent: DestinationMessage[];
  failedAttempts: number;
  reasons: Set<string>;
  duplicateAcks: number;
}

async function publishThroughRestart(type: DestinationType, broker: OwnBroker, t: DestinationTarget): Promise<Run> {
  const transports = createTransports();
  const run: Run = { sent: Array.from({ length: COUNT }, () => signedMessage()), failedAttempts: 0, reasons: new Set(), duplicateAcks: 0 };
  let next = 0;
  let accepted = 0;
  let restart: Promise<void> | null = null;
  // A broker that did not come back fails the test with its start-up output, not a publisher retrying until the
  // test's own timeout: the publishers stop at the first of that and their own deadline.
  let failure: Error | null = null;
  let lastError = '';
  const began = Date.now();
  const deadline = began + RETRY_FOR_MS;
  const timeline: string[] = [];
  const mark = (what: string) => timeline.push(`${what} at ${Date.now() - began} ms (${accepted} accepted, ${run.failedAttempts} failed)`);
  const publisher = async () => {
    while (next < COUNT && !failure) {
      const m = run.sent[next++]!;
      for (;;) {
        if (failure) return;
        if (Date.now() > deadline)
          throw new Error(
            `${type}: ${accepted} of ${COUNT} accepted ${RETRY_FOR_MS} ms after the start; ${timeline.join(', ')}; last failure: ${lastError}`,
          );
        const out = await transports[type].publish(t, m, { ...POLICY, timeoutMs: 2000 });
        if (out.ok) {
          if (out.excerpt?.startsWith('duplicate')) run.duplicateAcks++;
          break;
        }
        run.failedAttempts++;
        lastError = out.error!;
        run.reasons.add(out.error!.split(':')[0]!);
        await new Promise((r) => setTimeout(r, 50));
      }
      if (++accepted === COUNT / 3)
        restart = (async () => {
          mark('stopping');
          await broker.stop();
          mark('stopped');
          await new Promise((r) => setTimeout(r, OUTAGE_MS));
          await broker.start();
          mark('started again');
        })().catch((e: Error) => {
          failure = e;
          throw e;
        });
    }
  };
  try {
    await Promise.all(Array.from({ length: IN_FLIGHT }, publisher));
    await restart;
  } finally {
    await Promise.all(Object.values(transports).map((tr) => tr.close()));
  }
  return run;
}

/** Every sent message received at least once and verified; returns how many arrived more than once. */
function expectNoneLost(run: Run, received: { eventId: string; body: string; values: Record<string, string | undefined> }[]): number {
  const byId = new Map(run.sent.map((m) => [m.eventId, m]));
  for (const r of received) expectSignedAsSent(r, byId.get(r.eventId)!);
  const distinct = new Set(received.map((r) => r.eventId));
  expect(distinct.size).toBe(COUNT);
  // The outage was seen (attempts failed on the broken or refused connection) and recovered from.
  expect(run.failedAttempts).toBeGreaterThan(0);
  expect(
    [...run.reasons].every((r) => ['connection_failed', 'connection_lost', 'publish_failed', 'timeout after 2000 ms'].includes(r)),
  ).toBe(true);
  return received.length - distinct.size;
}

// No database in these: the PGlite pass runs them (docs/operating/ci.md); the engine's outage test runs on both.
describe.skipIf(onPostgres())('a broker restart mid-stream', () => {
  it.skipIf(!brokers.redis)('redis: lost 0, duplicates counted, reconnected after the outage', { timeout: 60_000 }, async () => {
    const broker = await ownBroker('redis');
    owned.push(broker);
    const run = await publishThroughRestart('redis', broker, target('redis', broker.url, 'restart:stream'));
    const redis = new Redis(broker.url, { maxRetriesPerRequest: 0 });
    const entries = await redis.xrange('restart:stream', '-', '+');
    redis.disconnect();
    const received = entries.map(([, flat]) => {
      const f = Object.fromEntries(flat.flatMap((v, i) => (i % 2 ? [] : [[v, flat[i + 1]!]])));
      return { eventId: f.event_id!, body: f.body!, values: f };
    });
    const duplicates = expectNoneLost(run, received);
    console.log(`redis restart: ${COUNT} events, ${run.failedAttempts} failed attempts, ${duplicates} duplicates stored`);
  });

  it.skipIf(!brokers.nats)(
    'nats: lost 0, duplicates counted (the stream dedupes by message id), reconnected',
    { timeout: 60_000 },
    async () => {
      const broker = await ownBroker('nats');
      owned.push(broker);
      const admin = await connect({ servers: broker.url });
      await (await admin.jetstreamManager()).streams.add({ name: 'RESTART', subjects: ['restart.>'] });
      await admin.close();
      const run = await publishThroughRestart('nats', broker, target('nats', broker.url, 'restart.{type}'));
      const reader = await connect({ servers: broker.url });
      const jsm = await reader.jetstreamManager();
      const { state } = await jsm.streams.info('RESTART');
      const received = [];
      for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
        const m = await jsm.streams.getMessage('RESTART', { seq });
        const values = Object.fromEntries([...m.header.keys()].map((k) => [k, m.header.get(k)]));
        received.push({ eventId: JSON.parse(new TextDecoder().decode(m.data)).id, body: new TextDecoder().decode(m.data), values });
      }
      await reader.close();
      const duplicates = expectNoneLost(run, received);
      expect(duplicates).toBe(0);
      console.log(
        `nats restart: ${COUNT} events, ${run.failedAttempts} failed attempts, ${run.duplicateAcks} duplicate PubAcks, 0 duplicates stored`,
      );
    },
  );

  it.skipIf(!brokers.rabbitmq)('rabbitmq: lost 0 on a durable queue, duplicates counted, reconnected', { timeout: 240_000 }, async () => {
    const broker = await ownBroker('rabbitmq');
    owned.push(broker);
    const queue = await durableQueue(broker, 'restart');
    const run = await publishThroughRestart('rabbitmq', broker, target('rabbitmq', broker.url, '{type}', { exchange: 'restart' }));
    const received = (await takeAll(broker.url, queue)).map((m) => ({
      eventId: m.properties.messageId as string,
      body: m.content.toString(),
      values: m.properties.headers as Record<string, string>,
    }));
    const duplicates = expectNoneLost(run, received);
    console.log(`rabbitmq restart: ${COUNT} events, ${run.failedAttempts} failed attempts, ${duplicates} duplicates stored`);
  });
});
