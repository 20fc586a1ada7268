import type { z } from 'zod';
import { namingKeys } from '../../db/group-commit.ts';
import type { BatchSend } from '../../db/sql-port.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { missingScope } from '../errors.ts';
import type { IdKind } from '../id.ts';
import {
  fingerprint,
  runIdempotentBatched,
  runIdempotentValue,
  validateIdempotencyKey,
  type BatchedResult,
  type IdempotencyRequest,
} from '../idempotency/idempotency.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { parseInput } from '../validation.ts';

/**
 * The seam between the domain and its fronts. A capability declares each
 * operation once, as an action: its summary, the path ids it addresses, its
 * input and output schemas (the output is the presenter's schema; the public
 * type is inferred from it), whether it is idempotent and its outcome; its
 * name, scope and fronts default from the capability (`capability()`), and
 * src/domain/registry.ts lists every capability. `invoke` is the one way to run
 * it; REST binds it by name to a method and path (rest/platform/bindings.ts),
 * GraphQL to a field (src/graphql/action.ts). The domain never sees an HTTP
 * status or envelope.
 */
export type Outcome = 'created' | 'ok' | 'accepted';
export type Front = 'rest' | 'graphql';
export type Reader = Tx | Deps['db']['prisma'];

/** What an action's body receives: parsed input, the path ids, and the database (the transaction of an idempotent action). */
export interface Call<P extends string, In, Db extends Reader = Reader> {
  deps: Deps;
  caller: SurfaceBCaller;
  params: Readonly<Record<P, string>>;
  input: In;
  db: Db;
}

/** What a batched action's body receives instead of a database: the batched SQL port's `send`, and what `within` holds for it. */
export interface BatchedCall<P extends string, In, H = undefined> extends Omit<Call<P, In>, 'db'> {
  send: BatchSend;
  hold: H;
}

/** What a batched action's body hands back: its value, its outcome when it differs from the declared one, and what still runs at the commit. */
export interface BatchedRun<Out> extends Omit<BatchedResult<Out>, 'value'> {
  value: Out;
  outcome?: Outcome;
}

/** How an action runs: a read, a change in a Prisma transaction, or a change on the batched SQL port (the hot paths). */
type Effect<P extends string, In, Out> =
  | { kind: 'read'; run: (call: Call<P, In>) => Promise<Out> }
  | { kind: 'transaction'; run: (call: Call<P, In, Tx>) => Promise<Out> }
  | {
      kind: 'batched';
      run: (call: BatchedCall<P, In, unknown>) => Promise<BatchedRun<Out>>;
      within?: <T>(deps: Deps, body: (hold: unknown) => Promise<T>) => Promise<T>;
      group?: boolean;
    };

export interface Action<P extends string = string, I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  /** Stable name, e.g. `webhook_endpoints.create`; also the idempotency fingerprint's first part. */
  readonly name: string;
  readonly scope: string;
  /** One line, transport-free: what the action does (REST's summary, the MCP tool's description). */
  readonly summary: string;
  /** The capability that declares it (src/domain/registry.ts). */
  readonly capability: Capability;
  /** The kind of prefixed id this action reads one object of: `node(id:)` answers that prefix with it. */
  readonly retrieves?: IdKind;
  /** Scopes needed besides `scope`, checked after it (the fronts enforce `scope` before reading anything). */
  readonly alsoNeeds?: readonly string[];
  /** Path ids, in order (REST path parameters, GraphQL id arguments); together the fingerprint's target. */
  readonly params: readonly P[];
  /**
   * Top-level fields of the answer that show a secret this once (a signing secret at create and rotate): a front
   * whose answers land in transcripts (MCP, src/mcp/) withholds them.
   */
  readonly revealsSecret?: readonly string[];
  /** The input besides the path ids: the REST body (POST, DELETE) or query (GET). */
  readonly input: I;
  readonly output: O;
  /** Runs in one transaction with its `Idempotency-Key` record; a key replays the stored value. */
  readonly idempotent: boolean;
  /** The usual outcome; a batched action's run may answer another one for a given call (e.g. `ok`: nothing changed). */
  readonly outcome: Outcome;
  /** The other outcomes its run may answer, declared so a front documents them (REST's OpenAPI statuses). */
  readonly alsoAnswers?: readonly Outcome[];
  readonly fronts: readonly Front[];
  readonly effect: Effect<P, z.output<I>, z.output<O>>;
}

/** An action as its capability's table declares it: `capability()` fills in what the registry defaults. */
export type Draft<P extends string = string, I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> = Omit<
  Action<P, I, O>,
  'name' | 'scope' | 'fronts' | 'capability'
> &
  Partial<Pick<Action<P, I, O>, 'name' | 'scope' | 'fronts'>>;

interface Declaration<P extends string, I extends z.ZodType, O extends z.ZodType> {
  /** Default: the capability's name, a dot, the table key in snake_case. */
  name?: string;
  /** Default: the capability's read scope for a read, its write scope for a change. */
  scope?: string;
  summary: string;
  alsoNeeds?: readonly string[];
  params?: readonly P[];
  retrieves?: IdKind;
  revealsSecret?: readonly string[];
  input: I;
  output: O;
  /** Default: REST and GraphQL. */
  fronts?: readonly Front[];
}

/** A change: idempotent, in a transaction. */
export function mutation<P extends string, I extends z.ZodType, O extends z.ZodType>(
  d: Declaration<P, I, O> & { outcome: Outcome; run: (call: Call<P, z.output<I>, Tx>) => Promise<z.output<O>> },
): Draft<P, I, O> {
  const { run, ...rest } = d;
  return { ...rest, params: d.params ?? [], idempotent: true, effect: { kind: 'transaction', run } };
}

/**
 * A change on the batched SQL port (src/db/sql-port.ts): idempotent, its
 * statements sent in as few round trips as the rule allows, the key's record
 * riding in the first and last batches. `within` wraps every attempt (e.g. to
 * hold run slots for the operations it enqueues) and hands the run `hold`.
 */
export function batchedMutation<P extends string, I extends z.ZodType, O extends z.ZodType, H = undefined>(
  d: Declaration<P, I, O> & {
    outcome: Outcome;
    alsoAnswers?: readonly Outcome[];
    within?: <T>(deps: Deps, body: (hold: H) => Promise<T>) => Promise<T>;
    /**
     * Concurrent calls may share one database transaction and its commit (src/db/group-commit.ts): the run names, in
     * its batches' `keys` (the first batch names at least one, or the call fails with GroupContractError) and its
     * result's, everything it locks, and is safe to run twice.
     */
    group?: boolean;
    run: (call: BatchedCall<P, z.output<I>, H>) => Promise<BatchedRun<z.output<O>>>;
  },
): Draft<P, I, O> {
  const { run, within, group, ...rest } = d;
  return {
    ...rest,
    params: d.params ?? [],
    idempotent: true,
    effect: { kind: 'batched', run, within, group } as Effect<P, z.output<I>, z.output<O>>,
  };
}

/** A read: no key, no transaction. */
export function read<P extends string, I extends z.ZodType, O extends z.ZodType>(
  d: Declaration<P, I, O> & { run: (call: Call<P, z.output<I>>) => Promise<z.output<O>> },
): Draft<P, I, O> {
  const { run, ...rest } = d;
  return { ...rest, params: d.params ?? [], idempotent: false, outcome: 'ok', effect: { kind: 'read', run } };
}

/** A capability: a table of actions, the prefix of their names, its title and its scopes. */
export interface Capability {
  /** The actions' name prefix, e.g. `webhook_endpoints`. */
  readonly name: string;
  /** What the documents group its actions under, e.g. `Webhook endpoints` (capabilities may share one). */
  readonly title: string;
  /** The scope of its reads and of its changes, e.g. `webhooks:read` and `webhooks:write`. */
  readonly scopes: { readonly read?: string; readonly write?: string };
}

type ActionOf<D> = D extends {
  params: readonly (infer P extends string)[];
  input: infer I extends z.ZodType;
  output: infer O extends z.ZodType;
}
  ? Action<P, I, O>
  : never;

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * Declares a capability's action table with the registry's defaults: the
 * name `<capability>.<key in snake_case>`, the scope from the verb (a read
 * takes `scopes.read`, a change `scopes.write`; `resource` stands for
 * `<resource>:read` and `<resource>:write`) and both fronts. An action states
 * only what differs.
 */
export function capability(c: { name: string; title: string; resource?: string; scopes?: Capability['scopes'] }) {
  const scopes = c.scopes ?? { read: `${c.resource}:read`, write: `${c.resource}:write` };
  const cap: Capability = { name: c.name, title: c.title, scopes };
  return <T extends Record<string, { summary: string; idempotent: boolean }>>(table: T): { readonly [K in keyof T]: ActionOf<T[K]> } => {
    const out: Record<string, Action> = {};
    for (const [key, draft] of Object.entries(table) as [string, Draft][]) {
      const scope = draft.scope ?? (draft.effect.kind === 'read' ? scopes.read : scopes.write);
      if (!scope) throw new Error(`${c.name}.${key} declares no scope and its capability has none for its verb`);
      out[key] = { ...draft, name: draft.name ?? `${c.name}.${snake(key)}`, scope, fronts: draft.fronts ?? BOTH, capability: cap };
    }
    return out as { readonly [K in keyof T]: ActionOf<T[K]> };
  };
}

const BOTH: readonly Front[] = ['rest', 'graphql'];

export interface ActionContext {
  deps: Deps;
  caller: SurfaceBCaller;
  /** The `Idempotency-Key`: validated here (naming the header) unless the front did, in its own words. */
  idempotencyKey?: string;
}

export interface Invocation<P extends string> {
  params?: Readonly<Record<P, string>>;
  /** The raw input; parsed by the action's schema (the first problem is `invalid_request` naming the parameter). */
  input?: unknown;
}

export interface Answer<T> {
  value: T;
  /** The declared outcome, or the one the run answered (a replay answers the first one). */
  outcome: Outcome;
  replayed: boolean;
}

/**
 * Checks the scope, then runs the action. An idempotent action parses its
 * input inside the keyed transaction: a key answers as it did the first time
 * (or refuses a different request) whatever today's validation says, as the
 * REST and GraphQL mutations always have (the replay lookup comes first, or,
 * on the batched port, after any failure: idempotency.ts).
 */
export async function invoke<P extends string, I extends z.ZodType, O extends z.ZodType>(
  ctx: ActionContext,
  action: Action<P, I, O>,
  req: Invocation<P> = {},
): Promise<Answer<z.output<O>>> {
  const { deps, caller } = ctx;
  if (!caller.scopes.has(action.scope)) throw missingScope(action.scope);
  if (action.alsoNeeds) for (const s of action.alsoNeeds) if (!caller.scopes.has(s)) throw missingScope(s);
  const params = req.params ?? ({} as Record<P, string>);
  const call = () => ({ deps, caller, params, input: parseInput(action.input, req.input) });
  const { effect, outcome } = action;
  if (effect.kind === 'read')
    return {
      value: await confirmingAdmission(caller, () => effect.run({ ...call(), db: deps.db.prisma }), true),
      outcome,
      replayed: false,
    };
  const target = action.params.length ? action.params.map((p) => params[p]).join('/') : undefined;
  const key = idempotencyOf(caller, action.name, target, req.input ?? {}, ctx.idempotencyKey);
  if (effect.kind === 'transaction') {
    const out = await runIdempotentValue<Stored<z.output<O>>>(deps, key, async (db) => ({ value: await effect.run({ ...call(), db }) }));
    return { value: out.value.value, outcome: out.value.outcome ?? outcome, replayed: out.replayed };
  }
  // A batched run's record stores its outcome beside the value: a replay answers as the first call did.
  const attempt = async (hold: unknown) => {
    const out = await confirmingAdmission(caller, (beforeCommit) =>
      runIdempotentBatched<Stored<z.output<O>>>(
        deps,
        key,
        async (send) => {
          // A grouped run names its own keys (the key's record names its own beside them): group-commit.ts.
          const run = await effect.run({ ...call(), send: effect.group ? namingKeys(send) : send, hold });
          return { ...run, value: { value: run.value, outcome: run.outcome ?? outcome } };
        },
        beforeCommit,
        effect.group,
      ),
    );
    // The runner announces what a committed run appended (the `onCommitted` port wakes the sequencer); a replay appended nothing.
    if (out.appended) deps.sequencer.kick();
    return out;
  };
  const out = await (effect.within ? effect.within(deps, attempt) : attempt(undefined));
  return { value: out.value.value, outcome: out.value.outcome ?? outcome, replayed: out.replayed };
}

/** Every action's idempotency record: its value, and its outcome when the run chose it (absent: the declared one). */
type Stored<T> = { value: T; outcome?: Outcome };

/**
 * A provisional caller (request-auth.ts) commits only if its admission held;
 * otherwise the transaction rolls back, the caller is confirmed outside it (a
 * refusal is thrown: nothing was changed) and the change runs once more. A
 * read (`afterRun`) runs beside the admission's freshness round trip instead
 * of after it, so the two waits overlap: its value (or its error) is answered
 * only if the admission held, else the caller is confirmed and the read runs
 * again.
 */
async function confirmingAdmission<T>(
  caller: SurfaceBCaller,
  run: (beforeCommit?: () => Promise<void>) => Promise<T>,
  afterRun = false,
): Promise<T> {
  const held = caller.admissionHeld;
  if (!held || !caller.confirm) return run();
  if (afterRun) {
    let value: T;
    try {
      value = await run();
    } catch (e) {
      if (await held()) throw e;
      await caller.confirm();
      return run();
    }
    if (await held()) return value;
    await caller.confirm();
    return run();
  }
  try {
    return await run(async () => {
      if (!(await held())) throw admissionChanged;
    });
  } catch (e) {
    if (e !== admissionChanged) throw e;
    await caller.confirm();
    return run();
  }
}

const admissionChanged = new Error('credentials changed since the request was admitted');

/**
 * The request's key in the caller's organization, fingerprinted by the
 * action's name, its params (the target) and the raw input, so a key replays
 * the same way whichever front sent it and never collides across organizations.
 */
function idempotencyOf(
  caller: SurfaceBCaller,
  name: string,
  target: string | undefined,
  input: unknown,
  idempotencyKey: string | undefined,
): IdempotencyRequest | undefined {
  const key = validateIdempotencyKey(idempotencyKey);
  return key ? { namespace: `b:${caller.organization.id}`, key, fingerprint: fingerprint(name, target ?? null, input ?? null) } : undefined;
}
