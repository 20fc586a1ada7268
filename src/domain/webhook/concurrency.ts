import type { AttemptOutcome } from './send.ts';
import { rateBurst, type EndpointPolicy } from './policy.ts';

/**
 * Adaptive per-endpoint concurrency: how many requests this process keeps in
 * flight to one endpoint. AIMD with a latency signal (TCP Reno's window with
 * Vegas' idea of watching the round trip):
 *
 * - it starts at `initial` and grows on each fast success: by one per success
 *   below the slow-start threshold (doubling per round trip), then by one per
 *   round trip (1/limit per success), never past `ceiling`;
 * - it grows only while the limit is actually used (half of it in flight when
 *   the attempt started), so an endpoint with little traffic keeps a small
 *   limit instead of one that a later burst would hit all at once;
 * - a congestion signal shrinks it: an overloaded answer (429, 5xx), a
 *   timeout or a connection failure halves it; round trips that rose well
 *   above the endpoint's recent minimum (their moving average, so one stall
 *   of the event loop is not a signal) take a fifth off; at most
 *   once per window (only attempts started after the last decrease count), so
 *   a burst of failures that were all in flight together is one signal, not
 *   a collapse to 1;
 * - other answers (2xx fast, 4xx, a destination refused by the SSRF guard)
 *   say nothing about load.
 *
 * The baseline round trip is the minimum over the last two windows of
 * BASELINE_WINDOW samples, so a receiver that becomes slower for good gets a
 * new baseline instead of a limit stuck at 1.
 */
export interface LimitPolicy {
  initial: number;
  ceiling: number;
}

/** Where an endpoint's limit starts (or the ceiling, if lower). */
export const INITIAL_ENDPOINT_LIMIT = 4;
const BASELINE_WINDOW = 200;
/** Round trips count as slow above both twice the baseline and the baseline plus this many ms (a loaded event loop, here or at the receiver, adds tens of ms). */
const SLOW_MARGIN_MS = 250;
/** Weight of a new round trip in the moving average (about the last ten count). */
const SMOOTHING = 0.1;

export class AdaptiveLimit {
  private value: number;
  private threshold: number;
  /** The deployment's ceiling, or the endpoint's max_in_flight if lower. */
  private ceiling: number;
  /** The endpoint's rate limit: a token bucket in real time (ms), one token per attempt started; tokens may go below zero (a debt). */
  private pace: { perSecond: number; burst: number; tokens: number; at: number } | undefined;
  private inFlightNow = 0;
  /** Incremented on each decrease; an attempt carries the epoch it started in. */
  private epoch = 0;
  private baselineMs = Infinity;
  private windowMinMs = Infinity;
  private previousMinMs = Infinity;
  private samples = 0;
  /** Exponential moving average of successful round trips. */
  private smoothedMs = 0;
  lastUsed = 0;

  constructor(private readonly policy: LimitPolicy) {
    this.ceiling = policy.ceiling;
    this.value = Math.min(policy.initial, policy.ceiling);
    this.threshold = policy.ceiling;
  }

  /**
   * Applies the endpoint's own policy (read with each lease, so a change takes
   * effect at the next one): max_in_flight caps the limit, whatever the
   * adaptation says; a rate limit paces the starts.
   */
  configure(p: Pick<EndpointPolicy, 'max_in_flight' | 'rate_limit_per_second'> | null, now: number): void {
    this.ceiling = Math.min(this.policy.ceiling, p?.max_in_flight ?? Infinity);
    this.value = Math.min(this.value, this.ceiling);
    this.threshold = Math.min(this.threshold, this.ceiling);
    const perSecond = p?.rate_limit_per_second;
    if (!perSecond) this.pace = undefined;
    else if (this.pace?.perSecond !== perSecond) {
      const burst = rateBurst(perSecond);
      this.pace = { perSecond, burst, tokens: Math.min(burst, this.pace ? this.tokens(now) : burst), at: now };
    }
  }

  private tokens(now: number): number {
    const p = this.pace!;
    return Math.min(p.burst, p.tokens + ((now - p.at) / 1000) * p.perSecond);
  }

  /** Whether the rate limit's bucket is below full (its state is worth reporting to the lease). */
  paced(now: number): boolean {
    return this.pace !== undefined && this.tokens(now) < this.pace.burst;
  }

  /** The current limit (whole requests). */
  get limit(): number {
    return Math.max(1, Math.floor(this.value));
  }

  get inFlight(): number {
    return this.inFlightNow;
  }

  /** Free slots now: below the limit, and within the rate limit's tokens. */
  free(now: number): number {
    const slots = this.limit - this.inFlightNow;
    return this.pace ? Math.min(slots, Math.floor(this.tokens(now))) : slots;
  }

  /** An attempt starts; the token goes back to `finish`. */
  start(now: number): AttemptToken {
    if (this.pace) {
      this.pace.tokens = this.tokens(now) - 1;
      this.pace.at = now;
    }
    this.inFlightNow++;
    this.lastUsed = now;
    return { epoch: this.epoch, used: this.inFlightNow * 2 >= this.limit };
  }

  finish(token: AttemptToken, outcome: Pick<AttemptOutcome, 'ok' | 'statusCode' | 'error' | 'durationMs'>): void {
    this.inFlightNow--;
    const signal = congestion(outcome);
    if (signal === 'none') return;
    if (signal === 'overload') {
      this.decrease(token, 0.5);
      return;
    }
    this.sample(outcome.durationMs);
    if (this.smoothedMs > Math.max(2 * this.baselineMs, this.baselineMs + SLOW_MARGIN_MS)) {
      this.decrease(token, 0.8);
      return;
    }
    if (!token.used) return;
    this.value = Math.min(this.ceiling, this.value + (this.value < this.threshold ? 1 : 1 / this.value));
  }

  private decrease(token: AttemptToken, factor: number): void {
    if (token.epoch !== this.epoch) return;
    this.epoch++;
    this.value = Math.max(1, this.value * factor);
    this.threshold = this.value;
  }

  private sample(ms: number): void {
    this.smoothedMs = this.samples === 0 && this.baselineMs === Infinity ? ms : this.smoothedMs + SMOOTHING * (ms - this.smoothedMs);
    this.windowMinMs = Math.min(this.windowMinMs, ms);
    if (++this.samples >= BASELINE_WINDOW) {
      this.previousMinMs = this.windowMinMs;
      this.windowMinMs = Infinity;
      this.samples = 0;
    }
    this.baselineMs = Math.min(this.previousMinMs, this.windowMinMs);
  }
}

export interface AttemptToken {
  epoch: number;
  /** Whether the limit was at least half used when the attempt started. */
  used: boolean;
}

/** What an outcome says about the receiver's load. */
export function congestion(o: Pick<AttemptOutcome, 'ok' | 'statusCode' | 'error'>): 'success' | 'overload' | 'none' {
  if (o.ok) return 'success';
  if (o.statusCode === 429 || (o.statusCode !== null && o.statusCode >= 500)) return 'overload';
  if (o.statusCode === null && !o.error?.startsWith('destination_refused')) return 'overload';
  return 'none';
}

/**
 * The limits of the endpoints this process has sent to. An endpoint idle for
 * IDLE_FORGET_MS with nothing in flight is forgotten (it starts small again).
 */
const IDLE_FORGET_MS = 5 * 60_000;

export class EndpointLimits {
  private readonly byEndpoint = new Map<string, AdaptiveLimit>();
  constructor(private readonly policy: LimitPolicy) {}

  /** Free slots of an endpoint this process knows nothing about. */
  get initialFree(): number {
    return Math.min(this.policy.initial, this.policy.ceiling);
  }

  of(endpointId: string): AdaptiveLimit {
    let l = this.byEndpoint.get(endpointId);
    if (!l) this.byEndpoint.set(endpointId, (l = new AdaptiveLimit(this.policy)));
    return l;
  }

  /** The current limit of an endpoint (its initial limit if unknown). */
  limitOf(endpointId: string): number {
    return this.byEndpoint.get(endpointId)?.limit ?? this.initialFree;
  }

  /**
   * The endpoints whose slots differ from an unknown one's (attempts in
   * flight, or a limit that moved): free slots and in-flight counts, as the
   * lease statement takes them.
   */
  known(now: number): { ids: string[]; free: number[]; inFlight: number[] } {
    const out = { ids: [] as string[], free: [] as number[], inFlight: [] as number[] };
    for (const [id, l] of this.byEndpoint) {
      if (l.inFlight === 0 && l.limit === this.initialFree && !l.paced(now)) continue;
      out.ids.push(id);
      out.free.push(Math.max(0, l.free(now)));
      out.inFlight.push(l.inFlight);
    }
    return out;
  }

  forgetIdle(now: number): void {
    for (const [id, l] of this.byEndpoint) if (l.inFlight === 0 && now - l.lastUsed > IDLE_FORGET_MS) this.byEndpoint.delete(id);
  }
}
