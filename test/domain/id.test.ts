import { describe, expect, it } from 'vitest';
import { isId, newId, newRequestId, uuidV7Hex } from '../../src/domain/id.ts';

/** Ids are UUIDv7 (RFC 9562): time-ordered, so lists page by id; within a process they strictly increase. */
describe('ids', () => {
  it('are RFC 9562 version 7, variant 10, with the current Unix millisecond', () => {
    const before = Date.now();
    const hex = uuidV7Hex();
    const after = Date.now();
    expect(hex).toMatch(/^[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    const ms = Number.parseInt(hex.slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
    expect(isId('event', newId('event'))).toBe(true);
  });

  it('strictly increase within a process, many per millisecond, and never repeat', () => {
    const ids = Array.from({ length: 50_000 }, () => uuidV7Hex());
    for (let i = 1; i < ids.length; i++) if (!(ids[i - 1]! < ids[i]!)) expect.fail(`${ids[i - 1]} then ${ids[i]}`);
    expect(new Set(ids).size).toBe(ids.length);
    // Many ids share a millisecond (so the counter, not the clock, ordered them), and their random tails differ.
    const perMs = new Map<string, number>();
    for (const id of ids) perMs.set(id.slice(0, 12), (perMs.get(id.slice(0, 12)) ?? 0) + 1);
    expect(Math.max(...perMs.values())).toBeGreaterThan(1);
    expect(new Set(ids.map((id) => id.slice(24))).size).toBeGreaterThan(ids.length * 0.99);
  });

  it('request ids are 96 random bits, never repeated', () => {
    const ids = Array.from({ length: 2_000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('seed the counter at random each millisecond', () => {
    const firsts = new Set<string>();
    let last = '';
    for (let i = 0; i < 200_000 && firsts.size < 20; i++) {
      const id = uuidV7Hex();
      if (id.slice(0, 12) !== last.slice(0, 12)) firsts.add(id.slice(13, 16) + id.slice(17, 24));
      last = id;
    }
    expect(firsts.size).toBeGreaterThanOrEqual(19);
  });
});
