import type { Deps } from '../domain/context.ts';
import { nextDueAt, runDueEvaluations } from '../domain/enrollment/due-evaluation.ts';
import { Loop } from './loop.ts';

/**
 * Evaluates what is due (src/domain/enrollment/due-evaluation.ts), then wakes at the next due instant when it comes
 * before the next poll; the poll (every `pollIntervalMs`) picks up changes committed by another process and clocks
 * that are not wall time.
 */
export class StandingScheduler {
  private readonly loop = new Loop(
    () => this.pass(),
    (err) => this.deps.log.error({ err }, 'standing evaluation poll failed'),
  );

  constructor(
    private readonly deps: Deps,
    private readonly pollIntervalMs = 1000,
  ) {}

  start(): void {
    this.loop.start(this.pollIntervalMs);
    this.loop.kick();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async pass(): Promise<void> {
    await runDueEvaluations(this.deps);
    const next = await nextDueAt(this.deps);
    const delay = next ? next.getTime() - this.deps.clock.now().getTime() : Number.POSITIVE_INFINITY;
    if (delay < this.pollIntervalMs) this.loop.wakeIn(delay);
  }
}
