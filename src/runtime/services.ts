import type { Config } from '../config.ts';
import type { Deps } from '../domain/context.ts';
import { lazyTransports } from '../domain/destination/lazy-transports.ts';
import type { DestinationType, Transport } from '../domain/destination/transport.ts';
import { distributionHandlers } from '../domain/distribution/handlers.ts';
import { tierHandlers } from '../domain/program/tiers.ts';
import { payoutHandlers } from '../domain/payout/payout.ts';
import { liveOperationCounts } from '../domain/operation/store.ts';
import { countLiveDeliveries } from '../domain/webhook/store.ts';
import { replayHandlers } from '../domain/webhook/replay.ts';
import { FailedAuthentication } from '../domain/token/failed-authentication.ts';
import { startMaintenance } from '../workers/maintenance.ts';
import { OperationsRunner } from '../workers/operations.ts';
import { WebhookWorker } from '../workers/webhook-delivery.ts';
import { CredentialCache } from './credential-cache.ts';
import { EventStream } from './event-stream.ts';
import { KillSwitch } from './kill-switch.ts';
import { Wake } from './loop.ts';
import { PlatformGate } from './platform-gate.ts';
import { Runtime } from './runtime.ts';
import { Sequencer } from './sequencer.ts';
import { StandingScheduler } from './standing-scheduler.ts';

export interface Services {
  deps: Deps;
  killSwitch: KillSwitch;
  gate: PlatformGate;
  sequencer: Sequencer;
  stream: EventStream;
  operations: OperationsRunner;
  webhooks: WebhookWorker;
  /** Starts and stops the services this process's role runs (ADR 0006). */
  runtime: Runtime;
}

/**
 * Builds the long-lived services once, in dependency order, each given its
 * ports at construction (docs/architecture.md, "Wiring"):
 * - the sequencer is the domain's `onCommitted` port (`deps.sequencer`): a
 *   commit that appended events kicks it;
 * - a sequenced batch goes to the stream (`onSequenced`: the batch's read,
 *   or a pull) and wakes the webhook fan-out; another process's NOTIFY (a
 *   position this process did not sequence) wakes the fan-out too, so
 *   neither waits for its poll;
 * - delivery runs the domain, so it is built last (with the event destinations' transports, which its stop closes), behind two wake-up ports
 *   given to the rest before it exists: `fanOut` (events were sequenced) and
 *   `wakeDelivery` (a retry committed; `deps.webhooks`). Where no delivery
 *   runs (an API process, or the worker turned off) they stay unattached and
 *   a retry is picked up by a worker's poll;
 * - the operations runner is the domain's operations port for the
 *   operations it runs itself and for every other caller (`deps.operations`).
 */
export function buildServices(
  base: Pick<Deps, 'db' | 'clock' | 'config' | 'log' | 'metrics'>,
  config: Config,
  /** The event destinations' transports, one per broker type (src/domain/destination/transports/). */
  transports: Record<DestinationType, Transport> = lazyTransports(),
): Services {
  // Roles (ADR 0006): an API process runs no background loop, a worker serves no request but the health probes.
  const serves = config.role !== 'worker';
  const background = config.role !== 'api';
  const delivers = background && config.webhook.worker;
  const fanOut = new Wake();
  const wakeDelivery = new Wake();

  let sequencedHere = 0n;
  const stream = new EventStream(base, (position) => {
    if (position > sequencedHere) fanOut.kick();
  });
  const sequencer = new Sequencer(base, {
    onSequenced: (max, read) => {
      sequencedHere = max;
      if (read) stream.sequenced(max, read.after, read.rows);
      else stream.pull(max);
      fanOut.kick();
    },
    readFrom: () => stream.readFrom(),
    onBatchStart: () => stream.sequencerBusy(),
    onBatchEnd: () => stream.sequencerIdle(),
  });
  const credentials = new CredentialCache(base);
  const failedAuthentication = new FailedAuthentication(config.authFailureRateLimit, () => base.clock.now().getTime());
  const ports = { ...base, sequencer, credentials, failedAuthentication, webhooks: wakeDelivery };
  const operations = new OperationsRunner(ports, [...distributionHandlers, ...tierHandlers, ...replayHandlers, ...payoutHandlers]);
  const deps: Deps = { ...ports, operations };
  const webhooks = new WebhookWorker(deps, transports);
  if (delivers) {
    fanOut.attach(() => webhooks.sequenced());
    wakeDelivery.attach(() => webhooks.kick());
  }
  const killSwitch = new KillSwitch(deps);
  const gate = new PlatformGate(deps, killSwitch);
  const standing = new StandingScheduler(deps);
  let maintenance: ReturnType<typeof startMaintenance> | undefined;
  // Scrape-time gauges: in-process counts, and two index-backed counts of live rows (never a query per request).
  const { db } = base;
  base.metrics?.observe({
    liveSubscribers: () => stream.subscriberCount,
    deliveryBacklog: () => countLiveDeliveries(db.prisma),
    operationsByStatus: () => liveOperationCounts(db.prisma),
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
  return { deps, killSwitch, gate, sequencer, stream, operations, webhooks, runtime };
}
