import { describe, expect, it } from 'vitest';
import { Loop } from '../../src/runtime/loop.ts';

/** A pass that waits for the test to release it, so kicks can land while it runs. */
function gatedLoop(more: () => boolean = () => false) {
  let passes = 0;
  let release: () => void = () => {};
  const errors: unknown[] = [];
  const loop = new Loop(
    async () => {
      passes++;
      await new Promise<void>((r) => (release = r));
      return more();
    },
    (err) => errors.push(err),
  );
  return { loop, errors, passes: () => passes, release: () => release() };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('Loop', () => {
  it('kicks during a pass coalesce into exactly one more pass', async () => {
    const g = gatedLoop();
    g.loop.kick();
    g.loop.kick();
    g.loop.kick();
    expect(g.passes()).toBe(1);
    g.release();
    await tick();
    expect(g.passes()).toBe(2);
    g.release();
    await g.loop.settled();
    expect(g.loop.busy).toBe(false);
    expect(g.passes()).toBe(2);
  });

  it('a pass that returns true runs again at once, until one returns false', async () => {
    let left = 3;
    let passes = 0;
    const loop = new Loop(
      async () => (passes++, --left > 0),
      () => {},
    );
    await loop.flush();
    expect(passes).toBe(3);
  });

  it('a pass that throws is reported and the next kick starts afresh', async () => {
    let fail = true;
    const errors: unknown[] = [];
    let passes = 0;
    const loop = new Loop(
      async () => {
        passes++;
        if (fail) throw new Error('boom');
      },
      (e) => errors.push(e),
    );
    await loop.flush();
    expect(errors).toHaveLength(1);
    fail = false;
    await loop.flush();
    expect(passes).toBe(2);
    expect(errors).toHaveLength(1);
  });

  it('stop waits for the running pass and ignores later kicks and wake-ups', async () => {
    const g = gatedLoop();
    g.loop.kick();
    let stopped = false;
    const stopping = g.loop.stop().then(() => (stopped = true));
    await tick();
    expect(stopped).toBe(false);
    g.release();
    await stopping;
    g.loop.kick();
    g.loop.wakeIn(0);
    await new Promise((r) => setTimeout(r, 5));
    expect(g.passes()).toBe(1);
  });

  it('wakeIn runs a pass after the delay; the earliest of several requests wins', async () => {
    let passes = 0;
    let woke!: () => void;
    const done = new Promise<void>((r) => (woke = r));
    const loop = new Loop(
      async () => {
        passes++;
        woke();
      },
      () => {},
    );
    loop.wakeIn(60_000);
    loop.wakeIn(1);
    loop.wakeIn(30_000);
    await done;
    expect(passes).toBe(1);
    await loop.stop();
  });
});
