import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Deps } from '../domain/context.ts';
import type { WebhookEndpoint } from '../db/generated/client.ts';
import { presentEvent } from '../domain/event/event.ts';
import { destinationTarget } from '../domain/destination/destination.ts';
import type { DestinationType, Transport } from '../domain/destination/transport.ts';
import { UndecryptableSecret } from '../domain/encryption.ts';
import { signingSecrets } from '../domain/webhook/endpoint.ts';
import { FANOUT_BATCH, fanOutBatch } from '../domain/webhook/fanout.ts';
import { exhaustLeased, leaseDue, recordAttempts, type FinishedAttempt, type LeasedDelivery } from '../domain/webhook/lease.ts';
import { keepAliveAgents, postWebhook, type Agents, type AttemptOutcome, type SendOptions } from '../domain/webhook/send.ts';
import { EndpointLimits, INITIAL_ENDPOINT_LIMIT } from '../domain/webhook/concurrency.ts';
import { REPLAY_HEADER, webhookHeaders, type WebhookHeaders } from '../domain/webhook/signature.ts';
import { Loop } from '../runtime/loop.ts';
import { tracing } from '../tracing.ts';

/**
 * The webhook delivery worker of one process: fans out newly sequenced events,
 * then leases due deliveries and sends them over keep-alive connections (an
 * event destination's through its broker type's transport), at
 * most `concurrency` at a time and, per endpoint, its adaptive limit (grows
 * while the receiver answers fast, shrinks on errors and slow answers, never
 * past `endpointConcurrency`; concurrency.ts), so one slow or hanging
 * receiver holds only its own few slots. It is woken by the local sequencer, by a retry,
 * by a finished attempt (a slot freed up), and by a poll timer, which also
 * picks up work other processes fanned out and leases that expired after a
 * worker died.
 */
export class WebhookWorker {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly loop = new Loop(
    () => this.pass(),
    (err) => this.deps.log.error({ err }, 'webhook worker pass failed; the poll timer will retry'),
  );
  /** Set by every wake-up except a finished attempt, which only frees a slot. */
  private fanOutDue = true;
  /**
   * Set by every wake-up but a sequenced batch (`sequenced()`), and by a fan-out that made deliveries: only then can
   * a lease find anything new. A sequenced batch that made no delivery (no endpoint wants it) costs no lease query;
   * retries and expired leases come due on the poll, as they always did.
   */
  private leaseDue = true;
  /** Whether the last fan-out met enabled endpoints: if not, the next one first tries the one-round-trip skip. */
  private expectEndpoints = false;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly limits: EndpointLimits;
  /** Requests in flight here per organization: the lease serves organizations with fewer first (lease.ts). */
  private readonly organizationsInFlight = new Map<string, number>();
  private readonly agents: Agents;
  private readonly sendOptions: SendOptions;
  /** Finished attempts waiting to be recorded: one statement records a whole batch. */
  private finished: FinishedAttempt[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly transports: Record<DestinationType, Transport>,
  ) {
    const cfg = deps.config.webhook;
    this.limits = new EndpointLimits({ initial: INITIAL_ENDPOINT_LIMIT, ceiling: cfg.endpointConcurrency });
    this.agents = keepAliveAgents(cfg.concurrency);
    this.sendOptions = { ...cfg, agents: this.agents };
  }

  /** An endpoint's current in-flight limit in this process (tests, diagnostics). */
  endpointLimit(endpointId: string): number {
    return this.limits.limitOf(endpointId);
  }

  start(): void {
    this.stopped = false;
    this.loop.start(this.deps.config.webhook.pollMs, () => {
      this.limits.forgetIdle(Date.now());
      this.kick();
    });
    this.kick();
  }

  /** Stops leasing and waits for the attempts on the wire (each bounded by the timeout) to be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop.stop();
    await Promise.all([...this.inFlight]);
    await this.flush();
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
    await Promise.all(Object.values(this.transports).map((t) => t.close()));
  }

  kick(fanOut = true): void {
    if (this.stopped) return;
    if (fanOut) this.fanOutDue = true;
    this.leaseDue = true;
    this.loop.kick();
  }

  /** Events were sequenced (here or, through NOTIFY, elsewhere): fan them out; lease only if that made deliveries. */
  sequenced(): void {
    if (this.stopped) return;
    this.fanOutDue = true;
    this.loop.kick();
  }

  /** Resolves when fan-out is caught up and nothing due is left or in flight (tests and benchmarks). */
  async drain(): Promise<void> {
    do {
      this.kick();
      await this.loop.settled();
      await Promise.all([...this.inFlight]);
      await this.flush();
    } while (this.loop.busy || this.inFlight.size > 0 || this.finished.length > 0);
  }

  /** One pass: fan out what was sequenced, then lease as many due deliveries as there are free slots; `true` when all were taken (more may be due). */
  private async pass(): Promise<boolean> {
    const cfg = this.deps.config.webhook;
    if (this.fanOutDue) {
      this.fanOutDue = false;
      for (;;) {
        if (this.stopped) break;
        const out = await fanOutBatch(this.deps, cfg.retryScheduleMs[0] ?? 0, this.expectEndpoints);
        this.expectEndpoints = out.endpoints;
        if (out.deliveries > 0) this.leaseDue = true;
        if (out.events < FANOUT_BATCH) break;
      }
    }
    if (this.stopped || !this.leaseDue) return false;
    const free = cfg.concurrency - this.inFlight.size;
    if (free <= 0) return false;
    this.leaseDue = false;
    const leased = await leaseDue(this.deps, {
      owner: this.owner,
      leaseMs: cfg.leaseMs,
      timeoutMs: cfg.timeoutMs,
      limit: free,
      initialFree: this.limits.initialFree,
      known: this.limits.known(Date.now()),
      organizations: { ids: [...this.organizationsInFlight.keys()], inFlight: [...this.organizationsInFlight.values()] },
    });
    if (leased.length) await this.dispatch(leased);
    // Every free slot taken: more may be due, so the loop runs again at once and leases again.
    if (leased.length === free) this.leaseDue = true;
    return leased.length === free;
  }

  private async dispatch(leased: LeasedDelivery[]): Promise<void> {
    const disabled: string[] = [];
    const now = this.deps.clock.now();
    // One event goes to several endpoints in a batch: its body is made once.
    const bodies = new Map<string, string>();
    for (const d of leased) {
      if (d.endpoint.status !== 'enabled') {
        disabled.push(d.id); // a fan-out raced the disable
        continue;
      }
      let body = bodies.get(d.event_id);
      if (body === undefined) bodies.set(d.event_id, (body = JSON.stringify(presentEvent(d.event))));
      this.track(d, signingSecrets(d.endpoint as WebhookEndpoint, now), body);
    }
    await exhaustLeased(this.deps, this.owner, disabled);
  }

  private track(d: LeasedDelivery, secrets: string[], body: string): void {
    const limit = this.limits.of(d.endpoint_id);
    const now = Date.now();
    limit.configure(d.endpoint.policy, now);
    const token = limit.start(now);
    const org = d.organization_id;
    this.organizationsInFlight.set(org, (this.organizationsInFlight.get(org) ?? 0) + 1);
    const p: Promise<void> = this.attempt(d, secrets, body)
      .then((outcome) => limit.finish(token, outcome))
      .catch((err) => {
        limit.finish(token, { ok: false, statusCode: null, error: 'unexpected', durationMs: 0 });
        this.deps.log.error(
          { err, endpointId: d.endpoint_id },
          'webhook attempt failed unexpectedly; its lease will expire and it is sent again',
        );
      })
      .finally(() => {
        const left = (this.organizationsInFlight.get(org) ?? 1) - 1;
        if (left > 0) this.organizationsInFlight.set(org, left);
        else this.organizationsInFlight.delete(org);
        this.inFlight.delete(p);
        this.kick(false);
      });
    this.inFlight.add(p);
  }

  private async attempt(d: LeasedDelivery, secrets: string[], body: string): Promise<AttemptOutcome> {
    const startedAt = this.deps.clock.now();
    // webhook-timestamp is wall-clock time: receivers compare it with their own
    // clock (Standard Webhooks' replay window), whatever the injected clock says.
    const headers = webhookHeaders(secrets, d.event_id, Math.floor(Date.now() / 1000), body);
    // A replayed event carries the same webhook-id and signature as a live one, plus the replay operation's id.
    const replay: Record<string, string> = d.replay_operation_id ? { [REPLAY_HEADER]: d.replay_operation_id } : {};
    const timeoutMs = d.endpoint.policy?.timeout_ms;
    const outcome = await tracing.span(
      'webhook.attempt',
      {
        'webhook.endpoint_id': d.endpoint_id,
        'webhook.event_id': d.event_id,
        'webhook.delivery_id': d.id,
        'webhook.attempt': d.attempts + 1,
      },
      async (span) => {
        const o =
          d.endpoint.type === 'webhook'
            ? await postWebhook(
                d.endpoint.url,
                { ...headers, ...replay },
                body,
                timeoutMs ? { ...this.sendOptions, timeoutMs } : this.sendOptions,
              )
            : await this.publish(d, headers, body, timeoutMs ?? this.sendOptions.timeoutMs);
        span.setAttributes({
          'http.response.status_code': o.statusCode ?? undefined,
          'webhook.outcome': o.ok ? 'success' : o.statusCode !== null ? 'http_error' : 'no_response',
          'error.type': o.error ?? undefined,
        });
        if (!o.ok) span.fail(o.error ?? `HTTP ${o.statusCode}`);
        return o;
      },
      { kind: 'client' },
    );
    this.deps.metrics?.webhookAttempt(outcome);
    this.finished.push({ delivery: d, startedAt, outcome });
    void this.flush();
    return outcome;
  }

  /**
   * An event destination's attempt: the same body and signature values as a webhook's, handed to its type's
   * transport with its decrypted URL. A URL whose key is not configured fails the attempt without a publish.
   */
  private async publish(d: LeasedDelivery, headers: WebhookHeaders, body: string, timeoutMs: number): Promise<AttemptOutcome> {
    let target: ReturnType<typeof destinationTarget>;
    try {
      target = destinationTarget(this.deps.config.encryptionKeys, { id: d.endpoint_id, ...d.endpoint });
    } catch (e) {
      if (!(e instanceof UndecryptableSecret)) throw e;
      return { ok: false, statusCode: null, error: `credentials_undecryptable: ${e.message}`, excerpt: null, durationMs: 0 };
    }
    const message = { eventId: d.event_id, eventType: d.event.type, body, headers, replayOperationId: d.replay_operation_id };
    const { allowLoopback, allowPrivateNetworks } = this.sendOptions;
    return this.transports[target.type].publish(target, message, { allowLoopback, allowPrivateNetworks, timeoutMs });
  }

  /**
   * Records the finished attempts. The slot of an attempt frees up when its
   * request ends, before it is recorded: its lease keeps it from being leased
   * again meanwhile. A failed flush leaves the leases to expire (sent again).
   */
  private flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (!this.finished.length) return Promise.resolve();
    this.flushing = (async () => {
      try {
        while (this.finished.length) {
          const batch = this.finished;
          this.finished = [];
          await recordAttempts(this.deps, this.owner, batch).catch((err) =>
            this.deps.log.error(
              { err, n: batch.length },
              'webhook attempts could not be recorded; their leases will expire and they are sent again',
            ),
          );
          this.kick(false);
        }
      } finally {
        this.flushing = undefined;
      }
    })();
    return this.flushing;
  }
}
