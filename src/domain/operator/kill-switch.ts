import { z } from 'zod';
import type { Deps } from '../context.ts';
import { systemSetting, writeSystemSetting } from './store.ts';

/**
 * The operator kill switch lives in the database so every process sees it
 * (each process caches it: src/runtime/kill-switch.ts).
 */
const KEY = 'kill_switch';

export interface KillSwitchState {
  engaged: boolean;
  updated_at: string | null;
}

export const SetKillSwitchInput = z.strictObject({ engaged: z.boolean() });

export async function readKillSwitch(deps: Pick<Deps, 'db'>): Promise<KillSwitchState> {
  const row = await systemSetting(deps.db.prisma, KEY);
  return {
    engaged: (row?.value as { engaged?: boolean } | null)?.engaged === true,
    updated_at: row?.updatedAt.toISOString() ?? null,
  };
}

/** Stores the switch and announces the change like a credential change, which drops every process's cached value. */
export async function writeKillSwitch(deps: Pick<Deps, 'db' | 'clock' | 'credentials'>, engaged: boolean): Promise<KillSwitchState> {
  const updatedAt = deps.clock.now();
  await writeSystemSetting(deps.db.prisma, KEY, { engaged }, updatedAt);
  await deps.credentials?.announce(deps.db.prisma);
  return { engaged, updated_at: updatedAt.toISOString() };
}
