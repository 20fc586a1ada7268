import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Which lane a query waits in on the embedded database (embedded-queue.ts):
 * work a client waits for (requests, and what they start) by default, or
 * background work, marked by the loops that run it (webhook delivery and its
 * fan-out, operations, standing, maintenance) and inherited by everything
 * they start. The marker is the async context, so no store or domain function
 * takes a parameter for it. PostgreSQL ignores it (see embedded-queue.ts).
 */
const lane = new AsyncLocalStorage<'background'>();

/** Runs `fn` (and everything it starts) as background work. */
export function inBackground<T>(fn: () => T): T {
  return lane.run('background', fn);
}

export function isBackground(): boolean {
  return lane.getStore() === 'background';
}
