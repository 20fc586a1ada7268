import { z } from 'zod';
import type { Tx } from '../../db/database.ts';
import { recordAudit } from '../audit/audit.ts';
import type { Deps, PlatformCaller } from '../context.ts';
import { DomainError, isDomainError, missingScope } from '../errors.ts';
import { fingerprint, runIdempotentValue } from '../idempotency/idempotency.ts';
import { CreateUnitInput, ListUnitsInput, UnitIdInput, deleteUnit, insertUnit, listUnits, publishUnit } from '../unit/unit.ts';
import { parseInput } from '../validation.ts';
import { consumeCreateQuota, type Quota } from './create-rate-limit.ts';
import { SCOPES, type Scope } from './catalogue.ts';

/**
 * The Surface A scope executor. Each executable scope registers its input
 * schema and a handler; `/scopes_exec` and the `/units/*` sugar both go
 * through `executeScope`, which verifies the scope, audits every call,
 * applies idempotency and the create rate limit, and runs the handler.
 */
export type ScopeMode = 'read' | 'create' | 'update' | 'delete';

interface Executor<S extends z.ZodType = z.ZodType> {
  category: string;
  mode: ScopeMode;
  input: S;
  run(deps: Deps, tx: Tx, caller: PlatformCaller, input: z.output<S>): Promise<Record<string, unknown>>;
}

const define = <S extends z.ZodType>(e: Executor<S>) => e as unknown as Executor;

const EmptyInput = z.strictObject({});

export const EXECUTORS: Partial<Record<Scope, Executor>> = {
  'org:read': define({
    category: 'org',
    mode: 'read',
    input: EmptyInput,
    run: async (_deps, _tx, caller) => ({ organization: { object: 'organization', ...caller.organization, livemode: true } }),
  }),
  'units:read': define({
    category: 'units',
    mode: 'read',
    input: ListUnitsInput,
    run: (_deps, tx, caller, input) => listUnits(tx, caller.organization.id, input),
  }),
  'units:create': define({
    category: 'units',
    mode: 'create',
    input: CreateUnitInput,
    run: async (deps, tx, caller, input) => ({ unit: await insertUnit(deps, tx, caller.organization.id, input), duplicate: false }),
  }),
  'units:delete': define({
    category: 'units',
    mode: 'delete',
    input: UnitIdInput,
    run: (deps, tx, caller, input) => deleteUnit(deps, tx, caller.organization.id, input.unit_id),
  }),
  'units:publish': define({
    category: 'units',
    mode: 'update',
    input: UnitIdInput,
    run: (deps, tx, caller, input) => publishUnit(deps, tx, caller.organization.id, input.unit_id),
  }),
};

export interface RegistryEntry {
  scope: string;
  category: string;
  description: string;
  mode: ScopeMode;
}

export function scopeRegistry(): RegistryEntry[] {
  return Object.entries(EXECUTORS).map(([scope, e]) => ({
    scope,
    category: e.category,
    description: SCOPES[scope as Scope],
    mode: e.mode,
  }));
}

export interface ExecuteRequest {
  scope: string;
  data: unknown;
  idempotencyKey?: string;
  requestId: string;
}

export interface ExecuteResult {
  entry: RegistryEntry;
  result: Record<string, unknown>;
  /** True when an Idempotency-Key replayed an earlier create. */
  duplicate: boolean;
  quota?: Quota;
}

const auditOf =
  (deps: Deps, caller: PlatformCaller, scope: string, requestId: string) =>
  (outcome: 'allowed' | 'refused' | 'replayed', reason?: string, tx?: Tx) =>
    recordAudit(
      deps,
      { organizationId: caller.organization.id, tokenId: caller.tokenId, scope: scope.slice(0, 200), outcome, reason, requestId },
      tx,
    );

/** The `/scopes_exec` envelope: which scope to execute, and its input. */
export const ExecInput = z.strictObject({
  scope: z.string().min(1).max(200),
  data: z.record(z.string(), z.unknown()).default({}),
});

/**
 * `/scopes_exec`: parses the envelope, then executes. A malformed envelope is
 * a refused call like any other and is audited too (scope as sent, if any).
 */
export async function executeScopeRequest(
  deps: Deps,
  caller: PlatformCaller,
  raw: unknown,
  meta: Omit<ExecuteRequest, 'scope' | 'data'>,
): Promise<ExecuteResult> {
  let envelope: z.output<typeof ExecInput>;
  try {
    envelope = parseInput(ExecInput, raw);
  } catch (e) {
    const sent = (raw as { scope?: unknown } | undefined)?.scope;
    if (isDomainError(e)) await auditOf(deps, caller, typeof sent === 'string' ? sent : '', meta.requestId)('refused', e.code);
    throw e;
  }
  return executeScope(deps, caller, { ...meta, scope: envelope.scope, data: envelope.data });
}

export async function executeScope(deps: Deps, caller: PlatformCaller, req: ExecuteRequest): Promise<ExecuteResult> {
  const audit = auditOf(deps, caller, req.scope, req.requestId);
  const executor = Object.hasOwn(EXECUTORS, req.scope) ? EXECUTORS[req.scope as Scope] : undefined;
  try {
    if (!executor) {
      throw new DomainError('unknown_scope', `Unknown scope '${req.scope}'; GET /scopes lists the executable scopes`, 'scope');
    }
    if (!caller.scopes.has(req.scope)) throw missingScope(req.scope);
    const input = parseInput(executor.input, req.data);
    const entry = scopeRegistry().find((e) => e.scope === req.scope)!;

    if (executor.mode !== 'create') {
      const result = await deps.db.transaction(async (tx) => {
        const out = await executor.run(deps, tx, caller, input);
        await audit('allowed', undefined, tx);
        return out;
      });
      return { entry, result, duplicate: false };
    }

    let quota: Quota | undefined;
    const idem = req.idempotencyKey
      ? { namespace: `a:${caller.organization.id}`, key: req.idempotencyKey, fingerprint: fingerprint(req.scope, input) }
      : undefined;
    const response = await runIdempotentValue(
      deps,
      idem,
      async (tx) => {
        quota = await consumeCreateQuota(deps, tx, {
          organizationId: caller.organization.id,
          tokenId: caller.tokenId,
          family: executor.category,
        });
        const body = await executor.run(deps, tx, caller, input);
        await audit('allowed', undefined, tx);
        return body;
      },
      'idempotency_key_reused',
    );
    if (response.replayed) {
      await audit('replayed');
      return { entry, result: { ...response.value, duplicate: true }, duplicate: true };
    }
    return { entry, result: response.value, duplicate: false, quota };
  } catch (e) {
    if (isDomainError(e)) await audit('refused', e.code);
    throw e;
  }
}
