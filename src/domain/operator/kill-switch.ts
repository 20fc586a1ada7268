import { z } from 'zod';
import type { Deps } from '../context.ts';
import { parseInput } from '../validation.ts';

/**
 * The operator kill switch lives in the database so every process sees it.
 * Each process caches the value for at most KILL_SWITCH_TTL_MS; a flip is
 * announced like a credential change (NOTIFY on PostgreSQL), which drops the
 * cached value in every process at once.
 */
const KEY = 'kill_switch';
export const KILL_SWITCH_TTL_MS = 1000;

export interface KillSwitchState {
  engaged: boolean;
  updated_at: string | null;
}

export const SetKillSwitchInput = z.strictObject({ engaged: z.boolean() });

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
    const row = await this.deps.db.prisma.systemSetting.findUnique({ where: { key: KEY } });
    const state = {
      engaged: (row?.value as { engaged?: boolean } | null)?.engaged === true,
      updated_at: row?.updatedAt.toISOString() ?? null,
    };
    // A flip that landed while this read was on its way must not be overwritten by the older value it read.
    if (generation === this.generation) this.cached = { state, at: now };
    return state;
  }

  async engaged(asOf?: number): Promise<boolean> {
    return (await this.state(asOf)).engaged;
  }

  async set(raw: unknown): Promise<KillSwitchState> {
    const { engaged } = parseInput(SetKillSwitchInput, raw);
    const updatedAt = this.deps.clock.now();
    this.generation++;
    await this.deps.db.prisma.systemSetting.upsert({
      where: { key: KEY },
      create: { key: KEY, value: { engaged }, updatedAt },
      update: { value: { engaged }, updatedAt },
    });
    await this.deps.credentials?.announce(this.deps.db.prisma);
    const state = { engaged, updated_at: updatedAt.toISOString() };
    this.generation++;
    this.cached = { state, at: Date.now() };
    return state;
  }
}
