/**
 * The benchmark's statistics, pure (no I/O), so a unit test pins them:
 * the interleaving schedule, per-round ratio pairing, median and spread.
 */

/** The p-quantile (0..1) with linear interpolation between order statistics; NaN for no data. */
export function quantile(xs: readonly number[], p: number): number {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const at = (s.length - 1) * Math.min(1, Math.max(0, p));
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return s[lo]! + (s[hi]! - s[lo]!) * (at - lo);
}

export const median = (xs: readonly number[]) => quantile(xs, 0.5);

export interface Spread {
  median: number;
  /** Interquartile range. */
  q1: number;
  q3: number;
  min: number;
  max: number;
  n: number;
}

export function spread(xs: readonly number[]): Spread {
  const finite = xs.filter(Number.isFinite);
  return {
    median: median(finite),
    q1: quantile(finite, 0.25),
    q3: quantile(finite, 0.75),
    min: finite.length ? Math.min(...finite) : NaN,
    max: finite.length ? Math.max(...finite) : NaN,
    n: finite.length,
  };
}

/**
 * The order of the slices: `rounds` rounds, each running every side once
 * (side 0 is the baseline). Successive rounds rotate the order (A B, B A,
 * A B, ... for two sides), so no side always runs first, after a warm-up or
 * after the same neighbour; machine load drifting over the run falls on
 * every side alike.
 */
export function schedule(sides: number, rounds: number): number[][] {
  return Array.from({ length: rounds }, (_, r) => Array.from({ length: sides }, (_, i) => (i + r) % sides));
}

/**
 * Per-round ratios subject / baseline: each subject slice is paired with the
 * baseline slice of the same round (adjacent in time), never with an
 * average over the run. A round whose baseline is zero or missing gives no
 * ratio.
 */
export function pairRatios(subject: readonly number[], baseline: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(subject.length, baseline.length); i++) {
    const s = subject[i]!;
    const b = baseline[i]!;
    if (Number.isFinite(s) && Number.isFinite(b) && b > 0) out.push(s / b);
  }
  return out;
}

/** Whether `value` meets `target` (at least `min`, below `max`); null when there is no target or no value. */
export function meets(value: number, target: { min?: number; max?: number } | undefined): boolean | null {
  if (!target || !Number.isFinite(value)) return null;
  if (target.min !== undefined && value < target.min) return false;
  if (target.max !== undefined && value >= target.max) return false;
  return true;
}

export const round = (x: number, d = 2) => (Number.isFinite(x) ? +x.toFixed(d) : x);
