import { z } from 'zod';
import type { ConnectConfig as ConnectConfigRow } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { capability, mutation, read } from '../action/action.ts';
import { ASSERTION_KEY } from '../assertion/assertion.ts';
import { findProgram } from '../program/program.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { shape } from '../shape.ts';
import { connectConfigOf, upsertConnectConfig } from './store.ts';

/**
 * Connect configuration: per brand, what the partner-connect flow of its
 * publishable keys answers. `allowed_origins` are the browser origins CORS
 * admits for those keys; `default_program` is the brand's program a join
 * enrolls in; `required_assertions` are the assertion keys the brand asks
 * of a joining partner; display name and colours dress the flow. A brand
 * never configured reads as the defaults (no origin, no program).
 */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
export const ORIGINS_MAX = 20;

/**
 * Why `value` is not an allowed origin, or undefined when it is. An origin
 * is scheme, host and optional port in its serialized form (lower case, no
 * default port, no trailing slash): no path, query, fragment, userinfo or
 * wildcard. https only, except http on loopback hosts (local development).
 */
export function originProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an origin such as https://shop.example';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname)))
    return 'must use https (http only for localhost, 127.0.0.1 or [::1])';
  if (url.username || url.password) return 'must not carry userinfo';
  if (url.hostname.includes('*')) return 'must name one host: wildcards are not supported';
  if (value !== url.origin)
    return `must be an origin: scheme, host and optional port only, lower case, with no path, query or fragment (did you mean ${url.origin}?)`;
  return undefined;
}

const origin = z
  .string()
  .max(255)
  .superRefine((v, ctx) => {
    const problem = originProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
const color = z.string().regex(/^#[0-9a-f]{6}$/, 'must be a colour #rrggbb (lower-case hex)');
const distinct = <T extends z.ZodType>(item: T, max: number) =>
  z
    .array(item)
    .max(max)
    .refine((a) => new Set(a).size === a.length, 'must not repeat a value');

/** Every field optional: what is sent replaces what was there; `null` clears a nullable field. */
export const UpdateConnectConfigInput = z.strictObject({
  allowed_origins: distinct(origin, ORIGINS_MAX).optional(),
  default_program: z.string().min(1).max(128).nullable().optional().describe('a prog_ program of the brand'),
  required_assertions: distinct(z.string().regex(ASSERTION_KEY, 'must be an assertion key ^[a-z][a-z0-9_]{0,63}$'), 20).optional(),
  display_name: z.string().min(1).max(100).nullable().optional(),
  primary_color: color.nullable().optional(),
  accent_color: color.nullable().optional(),
});

export const NoConnectConfigInput = z.strictObject({});

export const ConnectConfig = z.object({
  object: z.literal('connect_config'),
  brand: z.string(),
  allowed_origins: z.array(z.string()),
  default_program: z.string().nullable(),
  required_assertions: z.array(z.string()),
  display_name: z.string().nullable(),
  primary_color: z.string().nullable(),
  accent_color: z.string().nullable(),
  livemode: z.boolean(),
  updated_at: z.string().register(shape, { timestamp: true }).nullable().describe('ISO 8601 timestamp; null until first configured'),
});
export type PublicConnectConfig = z.output<typeof ConnectConfig>;

function presentConnectConfig(brandId: string, row: ConnectConfigRow | null): PublicConnectConfig {
  return {
    object: 'connect_config',
    brand: brandId,
    allowed_origins: (row?.allowedOrigins as string[] | undefined) ?? [],
    default_program: row?.defaultProgramId ?? null,
    required_assertions: (row?.requiredAssertions as string[] | undefined) ?? [],
    display_name: row?.displayName ?? null,
    primary_color: row?.primaryColor ?? null,
    accent_color: row?.accentColor ?? null,
    livemode: true,
    updated_at: row?.updatedAt.toISOString() ?? null,
  };
}

async function updateConnectConfig(
  deps: Deps,
  tx: Tx,
  caller: SurfaceBCaller,
  input: z.output<typeof UpdateConnectConfigInput>,
): Promise<PublicConnectConfig> {
  if (input.default_program) await findProgram(tx, caller, input.default_program, 'default_program');
  const now = deps.clock.now();
  const data = {
    ...(input.allowed_origins !== undefined ? { allowedOrigins: input.allowed_origins } : {}),
    ...(input.default_program !== undefined ? { defaultProgramId: input.default_program } : {}),
    ...(input.required_assertions !== undefined ? { requiredAssertions: input.required_assertions } : {}),
    ...(input.display_name !== undefined ? { displayName: input.display_name } : {}),
    ...(input.primary_color !== undefined ? { primaryColor: input.primary_color } : {}),
    ...(input.accent_color !== undefined ? { accentColor: input.accent_color } : {}),
    updatedAt: now,
  };
  const row = await upsertConnectConfig(tx, { brandId: caller.brand.id, organizationId: caller.organization.id }, now, data);
  await deps.credentials?.announce(tx); // every process drops its cached CORS answers (origins.ts)
  return presentConnectConfig(caller.brand.id, row);
}

/** The connect configuration actions (src/domain/action/action.ts): the selected brand's, read and written whole. */
export const connectConfig = capability({ name: 'connect_config', title: 'Connect configuration', resource: 'connect_config' })({
  retrieve: read({
    summary: "The brand's partner-connect configuration (defaults until first configured)",
    input: NoConnectConfigInput,
    output: ConnectConfig,
    run: async ({ caller, db }) => presentConnectConfig(caller.brand.id, await connectConfigOf(db, caller.brand.id)),
  }),
  update: mutation({
    summary:
      'Configure partner connect: allowed_origins (origins only; https, or http on localhost), default_program, required_assertions, display name and colours; the fields sent replace the stored ones, null clears',
    input: UpdateConnectConfigInput,
    output: ConnectConfig,
    outcome: 'ok',
    run: ({ deps, caller, input, db }) => updateConnectConfig(deps, db, caller, input),
  }),
});
