import { describe, expect, it } from 'vitest';
import { meets, median, pairRatios, quantile, schedule, spread } from '../../bench/stats.ts';

describe('bench statistics', () => {
  it('median and quantiles interpolate between order statistics, ignoring non-finite values', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(quantile([1, 2, 3, 4, 5], 0.25)).toBe(2);
    expect(quantile([1, 2, 3, 4], 0.25)).toBeCloseTo(1.75);
    expect(quantile([10], 0.99)).toBe(10);
    expect(median([1, NaN, 3, Infinity])).toBe(2);
    expect(median([])).toBeNaN();
  });

  it('spread reports the median, interquartile range, extremes and count', () => {
    expect(spread([0.9, 0.5, 0.7, 0.8, 0.6])).toEqual({ median: 0.7, q1: 0.6, q3: 0.8, min: 0.5, max: 0.9, n: 5 });
    const empty = spread([]);
    expect(empty.n).toBe(0);
    expect(empty.median).toBeNaN();
    expect(empty.min).toBeNaN();
  });

  it('pairs each subject slice with the baseline slice of its own round', () => {
    // A machine slowing down over the run: every round's pair keeps the same ratio, the pooled one would not.
    const baseline = [1000, 500, 250];
    const subject = [800, 400, 200];
    expect(pairRatios(subject, baseline)).toEqual([0.8, 0.8, 0.8]);
    expect(median(pairRatios(subject, baseline))).toBe(0.8);
    // Rounds without a usable baseline give no ratio; extra slices on one side are not paired.
    expect(pairRatios([1, 2, 3, 4], [2, 0, NaN])).toEqual([0.5]);
  });

  it('interleaves every side once per round, rotating which goes first', () => {
    expect(schedule(2, 4)).toEqual([
      [0, 1],
      [1, 0],
      [0, 1],
      [1, 0],
    ]);
    const three = schedule(3, 3);
    expect(three).toEqual([
      [0, 1, 2],
      [1, 2, 0],
      [2, 0, 1],
    ]);
    // Each side leads exactly once in three rounds, and every round runs every side once.
    expect(new Set(three.map((r) => r[0])).size).toBe(3);
    for (const r of three) expect([...r].sort()).toEqual([0, 1, 2]);
    expect(schedule(2, 0)).toEqual([]);
  });

  it('judges a figure against a lower or upper bound', () => {
    expect(meets(0.85, { min: 0.8 })).toBe(true);
    expect(meets(0.79, { min: 0.8 })).toBe(false);
    expect(meets(249, { max: 250 })).toBe(true);
    expect(meets(250, { max: 250 })).toBe(false);
    expect(meets(1, undefined)).toBeNull();
    expect(meets(NaN, { min: 0.8 })).toBeNull();
  });
});
