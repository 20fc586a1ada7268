import type { Deps } from '../domain/context.ts';
import { type KillSwitchState, readKillSwitch, SetKillSwitchInput, writeKillSwitch } from '../domain/operator/kill-switch.ts';
import { parseInput } from '../domain/validation.ts';

/**
 * This process's view of the operator kill switch (src/domain/operator/kill-switch.ts): the value is cached for at
 * most KILL_SWITCH_TTL_MS; a flip is announced like a credential change (NOTIFY on PostgreSQL), which drops the cached
 * value in every process at once.
 */
export const KILL_SWITCH_TTL_MS = 1000;

export class KillSwitch {
  private cached: { state: KillSwitchState; at: number } | undefined;
  /** Bumped by every flip and every announced change: a read that started before one is answered but never cached. */
  private generation = 0;
  constructor(private readonly deps: Deps) {
    deps.credentials?.subscribe(() => {
      this.generation++;
      this.cached = undefined;
    });
  }

  /** `asOf`: the request's arrival (performance.now()); with a credential cache, changes announced before it are seen. */
  async state(asOf = performance.now()): Promise<KillSwitchState> {
    if (this.deps.credentials && !(await this.deps.credentials.fresh(asOf))) this.cached = undefined;
    const now = Date.now();
    if (this.cached && now - this.cached.at < KILL_SWITCH_TTL_MS) return this.cached.state;
    const generation = this.generation;
    const state = await readKillSwitch(this.deps);
    // A flip that landed while this read was on its way must not be overwritten by the older value it read.
    if (generation === this.generation) this.cached = { state, at: now };
    return state;
  }

  async engaged(asOf?: number): Promise<boolean> {
    return (await this.state(asOf)).engaged;
  }

  async set(raw: unknown): Promise<KillSwitchState> {
    const { engaged } = parseInput(SetKillSwitchInput, raw);
    this.generation++;
    const state = await writeKillSwitch(this.deps, engaged);
    this.generation++;
    this.cached = { state, at: Date.now() };
    return state;
  }
}
