import type { Config } from '../config.ts';
import type { Deps } from '../domain/context.ts';
import { distributionHandlers } from '../domain/distribution/handlers.ts';
import { tierHandlers } from '../domain/program/tiers.ts';
import { payoutHandlers } from '../domain/payout/payout.ts';
import { StandingScheduler } from '../domain/enrollment/due-evaluation.ts';
import { Sequencer } from '../domain/event/sequencer.ts';
import { EventStream } from '../domain/event/stream.ts';
import { LIVE_STATUSES } from '../domain/operation/operation.ts';
import { KillSwitch } from '../domain/operator/kill-switch.ts';
import { PlatformGate } from '../domain/platform/request-auth.ts';
import { replayHandlers } from '../domain/webhook/replay.ts';
import { FailedAuthentication } from '../domain/token/failed-authentication.ts';
import { CredentialCache } from '../domain/token/credential-cache.ts';
import { type ClientAddresses, clientAddresses } from '../http/client-address.ts';
import { startMaintenance } from '../workers/maintenance.ts';
import { OperationsRunner } from '../workers/operations.ts';
import { WebhookWorker } from '../workers/webhook-delivery.ts';
import { Runtime } from './runtime.ts';

export interface Services {
  deps: Deps;
  killSwitch: KillSwitch;
  gate: PlatformGate;
  sequencer: Sequencer;
  stream: EventStream;
  operations: OperationsRunner;
  webhooks: WebhookWorker;
  /** The one per-address key function (connection shares, request buckets), built once per process from TRUSTED_PROXIES. */
  clientAddresses: ClientAddresses;
  /** Starts and stops the services this process's role runs (ADR 0006). */
  runtime: Runtime;
}

/**
 * Builds the long-lived services and wires their wake-up ports: a commit kicks
 * the sequencer; a sequenced batch pulls the stream and kicks the webhook
 * fan-out; another process's NOTIFY (a position this process did not sequence)
 * kicks the fan-out too, so neither waits for its poll.
 */
export function buildServices(base: Pick<Deps, 'db' | 'clock' | 'config' | 'log' | 'metrics'>, config: Config): Services {
  // Roles (ADR 0006): an API process runs no background loop, a worker serves no request but the health probes.
  const serves = config.role !== 'worker';
  const background = config.role !== 'api';
  const delivers = background && config.webhook.worker;
  let sequencedHere = 0n;
  const stream: EventStream = new EventStream(
    base,
    (position) => {
      if (delivers && position > sequencedHere) webhooks.sequenced();
    },
    (): boolean => sequencer.sequencing,
  );
  const sequencer: Sequencer = new Sequencer(base, {
    onSequenced: (max, read) => {
      sequencedHere = max;
      if (read) stream.sequenced(max, read.after, read.rows);
      else stream.pull(max);
      if (delivers) webhooks.sequenced();
    },
    readFrom: () => stream.readFrom(),
    onBatchEnd: () => stream.sequencerIdle(),
  });
  const credentials = new CredentialCache(base);
  const failedAuthentication = new FailedAuthentication(config.authFailureRateLimit, () => base.clock.now().getTime());
  const deps: Deps = { ...base, sequencer, credentials, failedAuthentication };
  const webhooks = new WebhookWorker(deps);
  // A retry requested on an API process is picked up by a worker's poll.
  if (delivers) deps.webhooks = webhooks;
  const operations = new OperationsRunner(deps, [...distributionHandlers, ...tierHandlers, ...replayHandlers, ...payoutHandlers]);
  deps.operations = operations;
  const killSwitch = new KillSwitch(deps);
  const gate = new PlatformGate(deps, killSwitch);
  const standing = new StandingScheduler(deps);
  let maintenance: ReturnType<typeof startMaintenance> | undefined;
  // Scrape-time gauges: in-process counts, and two index-backed counts of live rows (never a query per request).
  const { db } = base;
  base.metrics?.observe({
    liveSubscribers: () => stream.subscriberCount,
    deliveryBacklog: () => db.prisma.webhookDelivery.count({ where: { status: { in: ['pending', 'failing'] } } }),
    operationsByStatus: async () => {
      const rows = await db.prisma.operation.groupBy({ by: ['status'], where: { status: { in: [...LIVE_STATUSES] } }, _count: true });
      return Object.fromEntries(rows.map((r) => [r.status, r._count]));
    },
    database: () => db.stats(),
  });

  const runtime = new Runtime(base.log)
    .add({ name: 'event stream', start: () => stream.start({ tail: serves }), stop: () => stream.stop() })
    .add({ name: 'credential cache', start: () => credentials.start(), stop: () => credentials.stop() }, serves)
    .add({ name: 'stream authority', stop: () => gate.streams.stop() })
    // Started with a kick: events a previous run committed but did not sequence.
    .add({ name: 'sequencer', start: () => (sequencer.start(), sequencer.kick()), stop: () => sequencer.stop() })
    .add({ name: 'standing scheduler', start: () => standing.start(), stop: () => standing.stop() }, background)
    .add({ name: 'webhook delivery', start: () => webhooks.start(), stop: () => webhooks.stop() }, delivers)
    .add({ name: 'maintenance', start: () => void (maintenance = startMaintenance(deps)), stop: () => maintenance?.stop() }, background)
    .add({ name: 'operations', start: () => operations.start(), stop: () => operations.stop() }, background);
  return {
    deps,
    killSwitch,
    gate,
    sequencer,
    stream,
    operations,
    webhooks,
    clientAddresses: clientAddresses(config.clientAddress),
    runtime,
  };
}
