import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { GroupCommitStats } from './db/group-commit.ts';

/**
 * Prometheus metrics of one process (docs/operating/observability.md). One registry per
 * app (tests run several apps in one process), never prom-client's global
 * one. Hot paths only increment counters and observe histograms; the gauges
 * that need the database or a service are read at scrape time (`sources`).
 * Labels are low-cardinality: a route template, never a raw path or an id.
 */
export type AttemptOutcomeLabel = 'success' | 'http_error' | 'timeout' | 'network_error';

export interface ScrapeSources {
  /** Live subscribers of the event stream (graphql-ws and SSE). */
  liveSubscribers(): number;
  /** Deliveries pending or failing (due now or later). */
  deliveryBacklog(): Promise<number>;
  /** Operations per live status (pending, running, waiting). */
  operationsByStatus(): Promise<Record<string, number>>;
  /** Connections of the pg pool, or the embedded database's queued transactions; the group commit's counters. */
  database(): { inUse?: number; idle?: number; waiting?: number; queued?: number; groupCommit?: GroupCommitStats };
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'platform_http_requests_total',
    help: 'HTTP requests answered, by method, route template (`unmatched` for no route) and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'platform_http_request_duration_seconds',
    help: 'Time to answer an HTTP request (to the first body byte of a stream), by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly graphqlOperations = new Counter({
    name: 'platform_graphql_operations_total',
    help: 'GraphQL operations executed (HTTP and graphql-ws), by operation type',
    labelNames: ['operation_type'] as const,
    registers: [this.registry],
  });
  readonly eventsAppended = new Counter({
    name: 'platform_events_appended_total',
    help: 'Events appended, counted once by the process that sequenced them (committed and numbered)',
    registers: [this.registry],
  });
  readonly sequencingLag = new Histogram({
    name: 'platform_event_sequencing_lag_seconds',
    help: 'Time from the commit of the oldest event of a sequencing batch (as this process saw it) to its seq being assigned',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly webhookAttempts = new Counter({
    name: 'platform_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome: success (2xx), http_error (another status), timeout, network_error (no answer)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly webhookAttemptDuration = new Histogram({
    name: 'platform_webhook_attempt_duration_seconds',
    help: 'Webhook attempt latency by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
    registers: [this.registry],
  });
  readonly webhookExhausted = new Counter({
    name: 'platform_webhook_deliveries_exhausted_total',
    help: 'Deliveries whose last scheduled attempt failed (no attempt follows)',
    registers: [this.registry],
  });
  readonly operationTransitions = new Counter({
    name: 'platform_operation_transitions_total',
    help: 'Operation state changes applied by this process, by kind and resulting status',
    labelNames: ['kind', 'status'] as const,
    registers: [this.registry],
  });
  private sources: ScrapeSources | undefined;

  constructor(private readonly log?: Logger) {
    collectDefaultMetrics({ register: this.registry });
    const read = <T>(what: string, fn: () => Promise<T>): Promise<T | undefined> =>
      fn().catch((err) => {
        this.log?.warn({ err: { message: (err as Error).message }, metric: what }, 'a metric could not be read at scrape time');
        return undefined;
      });
    const sources = () => this.sources;
    new Gauge({
      name: 'platform_live_subscribers',
      help: 'Open live event subscriptions (graphql-ws and SSE) on this process',
      registers: [this.registry],
      collect() {
        const s = sources();
        if (s) this.set(s.liveSubscribers());
      },
    });
    new Gauge({
      name: 'platform_webhook_delivery_backlog',
      help: 'Deliveries pending or failing (not yet delivered nor exhausted), across every process',
      registers: [this.registry],
      aggregator: 'max', // every process reads the same count: a cluster's scrape reports it once
      async collect() {
        const s = sources();
        const n = s && (await read('platform_webhook_delivery_backlog', () => s.deliveryBacklog()));
        if (n !== undefined) this.set(n);
      },
    });
    new Gauge({
      name: 'platform_operations',
      help: 'Operations not yet settled, by status (pending, running, waiting), across every process',
      labelNames: ['status'] as const,
      registers: [this.registry],
      aggregator: 'max',
      async collect() {
        const s = sources();
        const counts = s && (await read('platform_operations', () => s.operationsByStatus()));
        if (!counts) return;
        for (const status of ['pending', 'running', 'waiting']) this.set({ status }, counts[status] ?? 0);
      },
    });
    new Gauge({
      name: 'platform_db_pool_connections',
      help: 'PostgreSQL pool connections of this process by state (in_use, idle)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const d = sources()?.database();
        if (d?.inUse === undefined) return;
        this.set({ state: 'in_use' }, d.inUse);
        this.set({ state: 'idle' }, d.idle ?? 0);
      },
    });
    new Gauge({
      name: 'platform_db_pool_waiting',
      help: 'Queries of this process waiting for a PostgreSQL pool connection',
      registers: [this.registry],
      collect() {
        const d = sources()?.database();
        if (d?.waiting !== undefined) this.set(d.waiting);
      },
    });
    // Group commit (src/db/group-commit.ts): the port counts; each scrape adds what it counted since the last one.
    const fromGroupCommit = (name: string, help: string, parts: [keyof GroupCommitStats, Record<string, string>?][]) => {
      const seen = parts.map(() => 0);
      new Counter({
        name,
        help,
        labelNames: Object.keys(parts[0]![1] ?? {}),
        registers: [this.registry],
        collect() {
          const g = sources()?.database().groupCommit;
          if (!g) return;
          parts.forEach(([key, labels], i) => {
            if (labels) this.inc(labels, g[key] - seen[i]!);
            else this.inc(g[key] - seen[i]!);
            seen[i] = g[key];
          });
        },
      });
    };
    fromGroupCommit(
      'platform_group_commit_groups_total',
      'Shared transactions of concurrent writes on this process, by outcome (rolled_back: every member then ran alone)',
      [
        ['committed', { outcome: 'committed' }],
        ['rolledBack', { outcome: 'rolled_back' }],
      ],
    );
    fromGroupCommit(
      'platform_group_commit_members_total',
      'Writes carried by committed shared transactions (divided by the committed groups: the mean group size)',
      [['members']],
    );
    fromGroupCommit('platform_group_commit_reruns_total', 'Writes run again alone after their shared transaction rolled back', [
      ['reruns'],
    ]);
    new Gauge({
      name: 'platform_db_queue_depth',
      help: 'Embedded database (PGlite, one connection): transactions queued or running',
      registers: [this.registry],
      collect() {
        const d = sources()?.database();
        if (d?.queued !== undefined) this.set(d.queued);
      },
    });
  }

  /** Connects the scrape-time gauges to the process's services. */
  observe(sources: ScrapeSources): void {
    this.sources = sources;
  }

  webhookAttempt(outcome: { ok: boolean; statusCode: number | null; error: string | null; durationMs: number }): void {
    const label: AttemptOutcomeLabel = outcome.ok
      ? 'success'
      : outcome.statusCode !== null
        ? 'http_error'
        : outcome.error?.startsWith('timeout')
          ? 'timeout'
          : 'network_error';
    this.webhookAttempts.labels(label).inc();
    this.webhookAttemptDuration.labels(label).observe(outcome.durationMs / 1000);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private scrape?: () => Promise<string>;

  /** In a cluster (src/runtime/cluster.ts), a scrape answers for every process: `scrape` asks the primary. */
  aggregate(scrape: () => Promise<string>): void {
    this.scrape = scrape;
  }

  /** The text exposition of every metric (of every process of the cluster, in one). */
  text(): Promise<string> {
    return this.scrape ? this.scrape() : this.registry.metrics();
  }
}
