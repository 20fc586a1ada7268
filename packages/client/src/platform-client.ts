import * as generated from './generated/resources.ts';
import { RequestSender, type FetchLike } from './request-sender.ts';
import { EventTypes } from './resources/event-types.ts';
import { Events } from './resources/events.ts';
import { Operations } from './resources/operations.ts';
import { Payouts } from './resources/payouts.ts';
import { Performance, ProgramTiers } from './resources/performance.ts';
import { Relationships } from './resources/relationships.ts';
import { EventDestinations, WebhookEndpoints } from './resources/webhook-endpoints.ts';
import { webhooks } from './webhooks.ts';

export interface PlatformClientOptions {
  /** A platform token, `sk_<brand>_live_...`. */
  apiKey: string;
  /** The API origin, e.g. `https://api.example.com`; `/v1/platform` is appended. */
  origin: string;
  /** `Service-Brand` for brand-scoped routes: a brand id or slug (default: the organization's oldest brand). */
  brand?: string;
  /** Per attempt; default 30 000 ms. */
  timeoutMs?: number;
  /** Retries after the first attempt; default 2. */
  maxRetries?: number;
  /** Upper bound of one wait between attempts (`Retry-After` included); default 20 000 ms. */
  maxRetryDelayMs?: number;
  /** A fetch implementation; default `globalThis.fetch`. */
  fetch?: FetchLike;
}

export const SURFACE_B_PATH = '/v1/platform';

/** The Surface B client: `new PlatformClient({ apiKey, origin })`. */
export class PlatformClient {
  readonly webhookEndpoints: WebhookEndpoints;
  /** Event destinations on message brokers: the same engine, subscriptions and signatures as webhook endpoints. */
  readonly eventDestinations: EventDestinations;
  readonly events: Events;
  readonly eventTypes: EventTypes;
  readonly assertions: generated.Assertions;
  readonly operations: Operations;
  readonly distributions: generated.Distributions;
  readonly deployments: generated.Deployments;
  readonly programs: generated.Programs;
  readonly programTiers: ProgramTiers;
  readonly enrollments: generated.Enrollments;
  readonly performance: Performance;
  readonly payouts: Payouts;
  readonly brands: generated.Brands;
  readonly entities: generated.Entities;
  readonly relationships: Relationships;
  readonly connections: generated.Connections;
  readonly connectConfig: generated.ConnectConfigs;
  readonly handoffIssuers: generated.HandoffIssuers;
  /** Verification needs no API key; also exported standalone as `webhooks`. */
  readonly webhooks = webhooks;
  readonly sender: RequestSender;

  constructor(opts: PlatformClientOptions) {
    if (!opts.apiKey) throw new TypeError('PlatformClient: apiKey is required');
    if (!opts.origin) throw new TypeError('PlatformClient: origin is required');
    this.sender = new RequestSender({
      baseUrl: opts.origin.replace(/\/+$/, '') + SURFACE_B_PATH,
      token: opts.apiKey,
      headers: opts.brand ? { 'service-brand': opts.brand } : undefined,
      timeoutMs: opts.timeoutMs,
      maxRetries: opts.maxRetries,
      maxRetryDelayMs: opts.maxRetryDelayMs,
      fetch: opts.fetch,
    });
    this.webhookEndpoints = new WebhookEndpoints(this.sender);
    this.eventDestinations = new EventDestinations(this.sender);
    this.events = new Events(this.sender);
    this.eventTypes = new EventTypes(this.sender);
    this.assertions = new generated.Assertions(this.sender);
    this.operations = new Operations(this.sender);
    this.distributions = new generated.Distributions(this.sender);
    this.deployments = new generated.Deployments(this.sender);
    this.programs = new generated.Programs(this.sender);
    this.programTiers = new ProgramTiers(this.sender);
    this.enrollments = new generated.Enrollments(this.sender);
    this.performance = new Performance(this.sender);
    this.payouts = new Payouts(this.sender);
    this.brands = new generated.Brands(this.sender);
    this.entities = new generated.Entities(this.sender);
    this.relationships = new Relationships(this.sender);
    this.connections = new generated.Connections(this.sender);
    this.connectConfig = new generated.ConnectConfigs(this.sender);
    this.handoffIssuers = new generated.HandoffIssuers(this.sender);
  }
}
