import { z } from 'zod';
import type { Action } from '../domain/action/action.ts';
import { ACTIONS } from '../domain/registry.ts';

/**
 * The MCP tools, derived from the registry (src/domain/registry.ts) and
 * nothing else: one tool per action, its name from the action's, its
 * description from the summary, its input the action's path ids and input as
 * one JSON Schema (2020-12, as `z.toJSONSchema` writes it) and its output the
 * action's output schema. Adding an action adds its tool; this file names
 * no action.
 */
export type JsonSchema = { [key: string]: unknown };

export interface Tool {
  readonly name: string;
  readonly action: Action;
  /** A change (the read-only mode hides it); it takes an `idempotency_key`. */
  readonly mutation: boolean;
  readonly description: string;
  readonly inputSchema: JsonSchema & { type: 'object' };
  readonly outputSchema: JsonSchema & { type: 'object' };
  readonly annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

/** The input every mutating tool adds: the action's idempotency key (REST's `Idempotency-Key` header). */
export const IDEMPOTENCY_KEY = 'idempotency_key';

const RETRY_NOTE =
  ' Safe to retry: pass `idempotency_key` (any unique string) and pass the same key again when you retry this call; without one the server derives it from this session and request, and every answer names the key it used.';

/** `webhook_endpoints.create` → `webhook_endpoints_create`: the character set every MCP client accepts ([A-Za-z0-9_-]). */
export const toolName = (action: Action): string => action.name.replace(/\./g, '_');

function schemaOf(type: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return z.toJSONSchema(type, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
}

function inputSchemaOf(action: Action, mutation: boolean): Tool['inputSchema'] {
  const {
    $schema,
    properties = {},
    required = [],
    ...rest
  } = schemaOf(action.input, 'input') as JsonSchema & {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  const params = Object.fromEntries(
    action.params.map((p) => [p, { type: 'string', minLength: 1, description: `The ${p} this call addresses` }]),
  );
  for (const name of [...action.params, ...(mutation ? [IDEMPOTENCY_KEY] : [])])
    if (Object.hasOwn(properties, name)) throw new Error(`${action.name}: its input already has a field '${name}'`);
  return {
    $schema,
    ...rest,
    type: 'object',
    properties: {
      ...params,
      ...properties,
      ...(mutation
        ? {
            [IDEMPOTENCY_KEY]: {
              type: 'string',
              minLength: 1,
              maxLength: 255,
              description: 'Makes the call safe to retry: the same key with the same input answers the first call again',
            },
          }
        : {}),
    },
    required: [...action.params, ...required],
  };
}

/** The output schema; a field the action reveals once is `null` over MCP unless the operator exposes secrets. */
function outputSchemaOf(action: Action): Tool['outputSchema'] {
  const schema = schemaOf(action.output, 'output') as JsonSchema & { type: 'object'; properties?: Record<string, JsonSchema> };
  for (const field of action.revealsSecret ?? []) {
    const prop = schema.properties?.[field];
    if (!prop) throw new Error(`${action.name} declares revealsSecret '${field}', which its output has not`);
    schema.properties![field] = { anyOf: [prop, { type: 'null' }], description: `${prop.description ?? ''} (null over MCP: see the note)` };
  }
  return schema;
}

function toolOf(action: Action): Tool {
  const mutation = action.effect.kind !== 'read';
  return {
    name: toolName(action),
    action,
    mutation,
    description: `${action.summary}. Needs scope ${[action.scope, ...(action.alsoNeeds ?? [])].join(', ')}.${mutation ? RETRY_NOTE : ''}`,
    inputSchema: inputSchemaOf(action, mutation),
    outputSchema: outputSchemaOf(action),
    annotations: {
      title: `${action.capability.title}: ${action.name.slice(action.name.indexOf('.') + 1).replace(/_/g, ' ')}`,
      readOnlyHint: !mutation,
      destructiveHint: mutation && /\.(delete|remove|revoke|cancel|end|reject)/.test(action.name),
      // Every change takes an idempotency key: repeating it with the same key has no further effect.
      idempotentHint: true,
      openWorldHint: false,
    },
  };
}

/** Every tool, in the registry's order. */
export const TOOLS: readonly Tool[] = ACTIONS.map(toolOf);

const byName = new Map(TOOLS.map((t) => [t.name, t]));
if (byName.size !== TOOLS.length) throw new Error('two actions map to one MCP tool name');

export const toolNamed = (name: string): Tool | undefined => byName.get(name);

/** What a caller may see: the tools its scopes allow (every scope the action needs), changes only outside read-only mode. */
export function toolsFor(scopes: ReadonlySet<string>, readOnly: boolean): Tool[] {
  return TOOLS.filter((t) => visible(t, scopes, readOnly));
}

export function visible(t: Tool, scopes: ReadonlySet<string>, readOnly: boolean): boolean {
  if (readOnly && t.mutation) return false;
  return scopes.has(t.action.scope) && (t.action.alsoNeeds ?? []).every((s) => scopes.has(s));
}
