import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Deps } from '../domain/context.ts';
import { presentEvent } from '../domain/event/event.ts';
import { signingSecrets } from '../domain/webhook/endpoint.ts';
import { FANOUT_BATCH, fanOutBatch } from '../domain/webhook/fanout.ts';
import { exhaustLeased, leaseDue, recordAttempt, type LeasedDelivery } from '../domain/webhook/lease.ts';
import { postWebhook } from '../domain/webhook/send.ts';
import { webhookHeaders } from '../domain/webhook/signature.ts';

/**
 * The webhook delivery worker of one process: fans out newly sequenced events,
 * then leases due deliveries and sends them, at most `concurrency` at a time
 * and `endpointConcurrency` per endpoint, so one slow or hanging receiver
 * holds only its own slots. It is woken by the local sequencer, by a retry,
 * by a finished attempt (a slot freed up), and by a poll timer, which also
 * picks up work other processes fanned out and leases that expired after a
 * worker died.
 */
export class WebhookWorker {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private running = false;
  private again = false;
  /** Set by every wake-up except a finished attempt, which only frees a slot. */
  private fanOutDue = true;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private idle: Promise<void> = Promise.resolve();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly perEndpoint = new Map<string, number>();

  constructor(private readonly deps: Deps) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), this.deps.config.webhook.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Stops leasing and waits for the attempts on the wire (each bounded by the timeout) to be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.idle;
    await Promise.all([...this.inFlight]);
  }

  kick(fanOut = true): void {
    if (this.stopped) return;
    if (fanOut) this.fanOutDue = true;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.idle = this.loop();
  }

  /** Resolves when fan-out is caught up and nothing due is left or in flight (tests and benchmarks). */
  async drain(): Promise<void> {
    do {
      this.kick();
      await this.idle;
      await Promise.all([...this.inFlight]);
    } while (this.running || this.inFlight.size > 0);
  }

  private async loop(): Promise<void> {
    const cfg = this.deps.config.webhook;
    try {
      do {
        this.again = false;
        if (this.fanOutDue) {
          this.fanOutDue = false;
          while (!this.stopped && (await fanOutBatch(this.deps, cfg.retryScheduleMs[0] ?? 0)) === FANOUT_BATCH);
        }
        if (this.stopped) break;
        const free = cfg.concurrency - this.inFlight.size;
        if (free <= 0) break;
        const leased = await leaseDue(this.deps, {
          owner: this.owner,
          leaseMs: cfg.leaseMs,
          limit: free,
          endpointSlots: (id) => cfg.endpointConcurrency - (this.perEndpoint.get(id) ?? 0),
          saturated: [...this.perEndpoint].filter(([, n]) => n >= cfg.endpointConcurrency).map(([id]) => id),
        });
        if (leased.length) await this.dispatch(leased);
        if (leased.length === free) this.again = true;
      } while (this.again && !this.stopped);
    } catch (err) {
      this.deps.log.error({ err }, 'webhook worker pass failed; the poll timer will retry');
    } finally {
      this.running = false;
    }
  }

  private async dispatch(leased: LeasedDelivery[]): Promise<void> {
    const { prisma } = this.deps.db;
    const [endpoints, events] = await Promise.all([
      prisma.webhookEndpoint.findMany({ where: { id: { in: [...new Set(leased.map((d) => d.endpoint_id))] } } }),
      prisma.event.findMany({ where: { id: { in: leased.map((d) => d.event_id) } } }),
    ]);
    const endpointById = new Map(endpoints.map((e) => [e.id, e]));
    const eventById = new Map(events.map((e) => [e.id, e]));
    const disabled: string[] = [];
    for (const d of leased) {
      const endpoint = endpointById.get(d.endpoint_id);
      const event = eventById.get(d.event_id);
      if (!endpoint || !event) continue; // deleted meanwhile: the cascade removed the delivery
      if (endpoint.status !== 'enabled') {
        disabled.push(d.id);
        continue;
      }
      const body = JSON.stringify(presentEvent(event));
      const secrets = signingSecrets(endpoint, this.deps.clock.now());
      this.track(d.endpoint_id, () => this.attempt(d, endpoint.url, secrets, body));
    }
    await exhaustLeased(this.deps, this.owner, disabled);
  }

  private track(endpointId: string, run: () => Promise<void>): void {
    this.perEndpoint.set(endpointId, (this.perEndpoint.get(endpointId) ?? 0) + 1);
    const p: Promise<void> = run()
      .catch((err) => this.deps.log.error({ err, endpointId }, 'webhook attempt could not be recorded; its lease will expire and it is sent again'))
      .finally(() => {
        this.inFlight.delete(p);
        const n = (this.perEndpoint.get(endpointId) ?? 1) - 1;
        if (n > 0) this.perEndpoint.set(endpointId, n);
        else this.perEndpoint.delete(endpointId);
        this.kick(false);
      });
    this.inFlight.add(p);
  }

  private async attempt(d: LeasedDelivery, url: string, secrets: string[], body: string): Promise<void> {
    const cfg = this.deps.config.webhook;
    const startedAt = this.deps.clock.now();
    // webhook-timestamp is wall-clock time: receivers compare it with their own
    // clock (Standard Webhooks' replay window), whatever the injected clock says.
    const headers = webhookHeaders(secrets, d.event_id, Math.floor(Date.now() / 1000), body);
    const outcome = await postWebhook(url, { ...headers }, body, cfg);
    await recordAttempt(this.deps, this.owner, d, startedAt, outcome);
  }
}
