// Writes the client library's generated files from the server's one declaration of each action: the registry
// (src/domain/registry.ts: every action's input and output zod schema) and REST's bindings table
// (rest/platform/bindings.ts: method, path, envelope), through JSON Schema, keys camelCased as the client reads them.
//   packages/client/src/generated/types.ts      every resource object and every action's params
//   packages/client/src/generated/resources.ts  per client resource, a class with one method per REST-bound action
//   packages/client/src/event-data.ts           the `data` of each event type (scripts/generate-event-data.ts)
// The client imports nothing from the server, so the files are committed; `--check` exits 1 when one is stale
// (test/client/generated.test.ts runs the same comparison). Biome leaves them alone (biome.json).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { Action } from '../src/domain/action/action.ts';
import { ACTIONS } from '../src/domain/registry.ts';
import { REST_BINDINGS } from '../rest/platform/bindings.ts';
import { camelKey, EVENT_DATA_FILE, SCALARS, generated as eventData, type JsonSchema, literal } from './generate-event-data.ts';

const file = (p: string) => new URL(`../packages/client/src/${p}`, import.meta.url).pathname;
export const TYPES_FILE = file('generated/types.ts');
export const RESOURCES_FILE = file('generated/resources.ts');

// ---------------------------------------------------------------------------------------------------------------
// The names the schemas cannot give: the one place where the client's public names are chosen.

/** A resource object is named after its `object` constant in PascalCase (`webhook_endpoint`: WebhookEndpoint), except: */
const OBJECT_NAMES: Record<string, string> = {
  assertion: 'AssertionEvent',
  event: 'PlatformEvent',
  event_type: 'EventCatalogueEntry',
};

/** Nested shapes and closed sets given a name of their own (`<Parent>.<field>`, an array's items by the array's field). */
const NESTED_NAMES: Record<string, string> = {
  'WebhookEndpoint.filter': 'WebhookEndpointFilter',
  'WebhookEndpoint.policy': 'WebhookEndpointPolicy',
  'WebhookEndpoint.health': 'WebhookEndpointHealth',
  'EventDestination.filter': 'WebhookEndpointFilter',
  'EventDestination.policy': 'WebhookEndpointPolicy',
  'EventDestination.health': 'WebhookEndpointHealth',
  'WebhookEndpointHealth.lastHour': 'WebhookHealthWindow',
  'WebhookEndpointHealth.lastDay': 'WebhookHealthWindow',
  'WebhookDelivery.attemptLog': 'WebhookAttempt',
  'Operation.status': 'OperationStatus',
  'LedgerEntry.status': 'LedgerEntryStatus',
  'Payout.status': 'PayoutStatus',
  'Relationship.status': 'RelationshipStatus',
  'PerformanceRollup.window': 'PerformanceWindow',
  'WebhookEndpointCreateParams.filter': 'WebhookEndpointFilterParams',
  'WebhookEndpointUpdateParams.filter': 'WebhookEndpointFilterParams',
  'WebhookEndpointCreateParams.policy': 'WebhookEndpointPolicyParams',
  'WebhookEndpointUpdateParams.policy': 'WebhookEndpointPolicyParams',
  'EventDestinationCreateParams.filter': 'WebhookEndpointFilterParams',
  'EventDestinationUpdateParams.filter': 'WebhookEndpointFilterParams',
  'EventDestinationCreateParams.policy': 'WebhookEndpointPolicyParams',
  'EventDestinationUpdateParams.policy': 'WebhookEndpointPolicyParams',
  'MeasurementBatchParams.measurements': 'MeasurementParams',
};

/**
 * A type parameter standing for one field: the event's `data` (typed per event type by TypedEvent), a tier change's
 * rung (a deletion answers DeletedProgramTier, METHODS below). `declare`: the field's own types are declared too.
 */
const TYPE_PARAMETERS: Record<string, { field: string; parameter: string; default: string; declare?: true }> = {
  PlatformEvent: { field: 'data', parameter: 'D', default: 'Record<string, any>' },
  ProgramTierChange: { field: 'tier', parameter: 'T', default: 'ProgramTier', declare: true },
};

/** Answers that are not one resource object, by action. */
const OUTPUT_NAMES: Record<string, string> = {
  'distributions.create': 'DistributionOperation',
  'distributions.launch': 'DistributionOperation',
  'distributions.pause': 'DistributionOperation',
  'distributions.resume': 'DistributionOperation',
  'distributions.cancel': 'DistributionOperation',
  'programs.create_tier': 'ProgramTierChange',
  'programs.update_tier': 'ProgramTierChange',
  'programs.delete_tier': 'ProgramTierChange',
  'connections.revoke': 'ConnectionRevocation',
};

/** Params types named before they were generated (the default: the operationId's noun, then its verb: `BrandListParams`). */
const PARAMS_NAMES: Record<string, string> = {
  'webhook_deliveries.list': 'EndpointDeliveryQueryParams',
  'webhook_deliveries.list_for_event': 'EventDeliveryQueryParams',
  'events.list': 'EventQueryParams',
  'operations.list': 'OperationListParams',
  'distributions.validate': 'DistributionCreateParams',
  'assertions.list': 'AssertionListParams',
  'performance.record_measurements': 'MeasurementBatchParams',
  'performance.rollups': 'RollupParams',
  'payouts.ledger': 'LedgerParams',
  'payouts.list': 'PayoutListParams',
  'payouts.run': 'PayoutRunParams',
  'programs.create_tier': 'TierParams',
  'programs.update_tier': 'TierUpdateParams',
  'connect_config.update': 'ConnectConfigParams',
};

/** The client resource (class) of a capability when it is not the capability's name in PascalCase. */
const RESOURCE_NAMES: Record<string, string> = { connect_config: 'ConnectConfigs' };

/**
 * Where an action's method differs from `<capability>.<key>`: another resource, another name, or `internal` (protected:
 * the hand-written subclass in resources/ shapes the public method around it, e.g. a query's wire form).
 */
const METHODS: Record<string, { resource?: string; method?: string; internal?: true; returns?: string }> = {
  'webhook_endpoints.delete': { method: 'del' },
  'event_destinations.delete': { method: 'del' },
  'event_destinations.list_deliveries': { method: 'deliveryPage', internal: true },
  'webhook_deliveries.list': { resource: 'WebhookEndpoints', method: 'deliveryPage', internal: true },
  'webhook_deliveries.list_for_event': { resource: 'Events', method: 'deliveryPage', internal: true },
  'webhook_deliveries.retry': { resource: 'WebhookEndpoints', method: 'retryDelivery' },
  'events.list': { method: 'listPage', internal: true, returns: 'TypedEvent' },
  'events.retrieve': { returns: 'TypedEvent' },
  'event_types.list': { method: 'listCatalogue', internal: true },
  'event_types.retrieve': { method: 'retrieveEntry', internal: true },
  'assertions.retrieve': { method: 'retrieveEvent' },
  'programs.create_tier': { resource: 'ProgramTiers', method: 'create' },
  'programs.list_tiers': { resource: 'ProgramTiers', method: 'listPage', internal: true },
  'programs.update_tier': { resource: 'ProgramTiers', method: 'update' },
  'programs.delete_tier': { resource: 'ProgramTiers', method: 'delete', returns: 'ProgramTierChange<DeletedProgramTier>' },
  'performance.record_measurements': { method: 'recordBatch', internal: true },
  'payouts.reverse_entry': { method: 'reverse' },
};

// ---------------------------------------------------------------------------------------------------------------

const pascal = (s: string) => s.replace(/(^|[_.])([a-z])/g, (_, __, c: string) => c.toUpperCase());
const propKey = (key: string) => (/^[A-Za-z_$][\w$]*$/.test(key) ? key : `'${key}'`);
const doc = (text: string | undefined, pad: string) => (text ? `${pad}/** ${text.replace(/\*\//g, '*\\/')} */\n` : '');
const jsonSchema = (s: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(s, { io, unrepresentable: 'any' }) as JsonSchema;

/** A named type's fields, merged over every answer that carries it: a field is required only where every one has it. */
interface Named {
  variants: number;
  fields: Map<string, { types: string[]; required: number; description?: string }>;
  kind: 'object' | 'alias';
  alias?: string;
  description?: string;
}

class TypeWriter {
  readonly named = new Map<string, Named>();
  /** Inputs accept a `Date` where the schema says date-time (sent as its ISO string). */
  constructor(private readonly io: 'input' | 'output') {}

  typeOf(s: JsonSchema, at: string | undefined, depth: number): string {
    if (s.const !== undefined) return literal(s.const);
    if (s.enum) return this.alias(at, s.enum.map(literal).join(' | '));
    if (s.anyOf) return dedupe(s.anyOf.map((x) => this.typeOf(x, at, depth))).join(' | ');
    if (Array.isArray(s.type)) return s.type.map((type) => this.typeOf({ ...s, type }, at, depth)).join(' | ');
    if (this.io === 'input' && s.type === 'string' && s.format === 'date-time') return 'string | Date';
    if (s.type === 'array') {
      const item = s.items ? this.typeOf(s.items, at, depth) : 'unknown';
      return /^[\w<>, ]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    if (s.type === 'object') return this.objectType(s, at, depth);
    return SCALARS[s.type ?? ''] ?? 'any';
  }

  private alias(at: string | undefined, body: string): string {
    const name = at && NESTED_NAMES[at];
    if (!name) return body;
    this.named.set(name, { variants: 1, fields: new Map(), kind: 'alias', alias: body });
    return name;
  }

  private objectType(s: JsonSchema, at: string | undefined, depth: number): string {
    const entries = Object.entries(s.properties ?? {});
    if (entries.length === 0) return s.additionalProperties === false ? 'Record<string, never>' : 'Record<string, any>';
    const object = s.properties?.object?.const;
    const deleted = s.properties?.deleted?.const === true;
    let name = (at && NESTED_NAMES[at]) || undefined;
    if (typeof object === 'string' && object !== 'list') {
      const base = OBJECT_NAMES[object] ?? pascal(object);
      name = deleted ? `Deleted${base}` : base;
    }
    if (name) return this.record(name, s);
    const required = new Set(s.required ?? []);
    const pad = '  '.repeat(depth + 1);
    const fields = entries.map(
      ([k, v]) =>
        `${doc(v.description, pad)}${pad}${propKey(camelKey(k))}${required.has(k) ? '' : '?'}: ${this.typeOf(v, at && `${at}.${camelKey(k)}`, depth + 1)};\n`,
    );
    return `{\n${fields.join('')}${'  '.repeat(depth)}}`;
  }

  /** Adds one variant of a named object: its fields merge into those of the variants met before. */
  record(name: string, s: JsonSchema): string {
    const named = this.named.get(name) ?? { variants: 0, fields: new Map(), kind: 'object', description: s.description };
    this.named.set(name, named);
    named.variants++;
    const required = new Set(s.required ?? []);
    const parameter = TYPE_PARAMETERS[name];
    for (const [k, v] of Object.entries(s.properties ?? {})) {
      const key = camelKey(k);
      const own = parameter?.field === key && !parameter.declare ? undefined : this.typeOf(v, `${name}.${key}`, 1);
      const type = parameter?.field === key ? parameter.parameter : own!;
      const field = named.fields.get(key) ?? { types: [], required: 0, description: v.description };
      named.fields.set(key, field);
      if (!field.types.includes(type)) field.types.push(type);
      if (required.has(k)) field.required++;
    }
    return name;
  }

  /** Every named type, in the order first met. */
  declarations(): string {
    return [...this.named]
      .map(([name, n]) => {
        if (n.kind === 'alias') return `export type ${name} = ${n.alias};\n`;
        const fields = [...n.fields].map(
          ([k, f]) => `${doc(f.description, '  ')}  ${propKey(k)}${f.required === n.variants ? '' : '?'}: ${f.types.join(' | ')};\n`,
        );
        const parameter = TYPE_PARAMETERS[name];
        const params = parameter ? `<${parameter.parameter} = ${parameter.default}>` : '';
        return `${doc(n.description, '')}export interface ${name}${params} {\n${fields.join('')}}\n`;
      })
      .join('\n');
  }
}

const dedupe = (xs: string[]) => [...new Set(xs)];

// ---------------------------------------------------------------------------------------------------------------

interface Method {
  action: Action;
  resource: string;
  method: string;
  internal: boolean;
  httpMethod: 'GET' | 'POST' | 'DELETE';
  /** `{id}` where Koa says `:id`. */
  path: string;
  params: string[];
  envelope?: string;
  /** The params type and whether every field is optional; undefined when the action takes no input. */
  input?: { name: string; optional: boolean };
  output: string;
  /** A cursor list: `PagePromise` of its items. */
  paged: boolean;
}

function methodsAndTypes(): { methods: Method[]; outputs: TypeWriter; inputs: TypeWriter; paramsTypes: Map<string, string> } {
  const outputs = new TypeWriter('output');
  const inputs = new TypeWriter('input');
  const paramsTypes = new Map<string, string>();
  const methods: Method[] = [];
  for (const action of ACTIONS.filter((a) => a.fronts.includes('rest'))) {
    const binding = REST_BINDINGS[action.name]!;
    const over = METHODS[action.name] ?? {};
    const capability = action.capability.name;
    const key = action.name.slice(capability.length + 1);

    const outSchema = jsonSchema(action.output, 'output');
    const listItem = outSchema.properties?.object?.const === 'list' ? outSchema.properties.data?.items : undefined;
    const produced = OUTPUT_NAMES[action.name]
      ? outputs.record(OUTPUT_NAMES[action.name]!, outSchema)
      : listItem
        ? `Page<${outputs.typeOf(listItem, undefined, 0)}>`
        : outputs.typeOf(outSchema, undefined, 0);
    const output = over.returns
      ? produced.replace(/^(Page<)?\w+/, (_, page: string | undefined) => `${page ?? ''}${over.returns}`)
      : produced;

    const inSchema = jsonSchema((binding.method === 'GET' && binding.documentedQuery) || action.input, 'input');
    const props = Object.keys(inSchema.properties ?? {});
    let input: Method['input'];
    if (props.length) {
      const [, verb, noun] = binding.operationId.match(/^([a-z]+)(.*)$/)!;
      const name = PARAMS_NAMES[action.name] ?? `${noun}${pascal(verb!)}Params`;
      const body = inputs.typeOf(inSchema, name, 0);
      const before = paramsTypes.get(name);
      if (before !== undefined && before !== body) throw new Error(`${name}: two actions give it different shapes`);
      paramsTypes.set(name, body);
      input = { name, optional: !(inSchema.required ?? []).length };
    }
    methods.push({
      action,
      resource: over.resource ?? RESOURCE_NAMES[capability] ?? pascal(capability),
      method: over.method ?? camelKey(key),
      internal: over.internal ?? false,
      httpMethod: binding.method,
      path: binding.path.replace(/:([a-z_]+)/gi, '{$1}'),
      params: [...action.params],
      envelope: binding.envelope,
      input,
      output,
      paged: listItem !== undefined && props.includes('starting_after'),
    });
  }
  return { methods, outputs, inputs, paramsTypes };
}

const HEADER = `// Generated by scripts/generate-client.ts from the registry's schemas (src/domain/registry.ts) and REST's bindings
// (rest/platform/bindings.ts): do not edit; run npm run client:generate.
`;

function typesFile(outputs: TypeWriter, inputs: TypeWriter, paramsTypes: Map<string, string>): string {
  const params = [...paramsTypes].map(([name, body]) => `export type ${name} = ${body};\n`).join('\n');
  const nestedInputs = inputs.declarations();
  const deleted = [...outputs.named.keys()].filter((n) => n.startsWith('Deleted'));
  return `${HEADER}// Keys are camelCased as the client reads and sends them (key-case.ts).

// Resource objects and the answers that carry them.

${outputs.declarations()}
/** What a delete answers. */
export type DeletedObject = ${deleted.join(' | ')};

// Every action's params (REST's body or query); a date-time also takes a Date.

${params}${nestedInputs ? `\n${nestedInputs}` : ''}`;
}

function resourcesFile(methods: Method[], outputs: TypeWriter, paramsTypes: Map<string, string>): string {
  const byResource = new Map<string, Method[]>();
  for (const m of methods) byResource.set(m.resource, [...(byResource.get(m.resource) ?? []), m]);
  const classes = [...byResource]
    .map(([resource, ms]) => {
      const body = ms.map(methodSource).join('\n');
      const actions = ms.map((m) => m.action.name).join(', ');
      return `/** The REST-bound actions ${actions}. */\nexport class ${resource} extends Resource {\n${body}}\n`;
    })
    .join('\n');
  const used = (names: Iterable<string>) => [...names].filter((n) => new RegExp(`\\b${n}\\b`).test(classes)).sort();
  const list = used(['Page', 'PagePromise']);
  const typed = used(['TypedEvent']);
  return `${HEADER}import type { ${list.join(', ')} } from '../list.ts';
import type { RequestOptions } from '../request-sender.ts';
import { Resource, path } from '../resources/resource.ts';
${typed.length ? `import type { ${typed.join(', ')} } from '../typed-event.ts';\n` : ''}import type { ${used([...outputs.named.keys(), ...paramsTypes.keys()]).join(', ')} } from './types.ts';

${classes}`;
}

function methodSource(m: Method): string {
  const ids = m.params.map(camelKey);
  const args = [
    ...ids.map((id) => `${id}: string`),
    ...(m.input ? [`params: ${m.input.name}${m.input.optional ? ' = {}' : ''}`] : []),
    'options?: RequestOptions',
  ].join(', ');
  const path = ids.length ? `path('${m.path}', ${ids.join(', ')})` : `'${m.path}'`;
  const visibility = m.internal ? 'protected ' : '';
  const summary = doc(m.action.summary, '  ');
  if (m.paged) {
    const item = m.output.replace(/^Page<(.*)>$/, '$1');
    return `${summary}  ${visibility}${m.method}(${args}): PagePromise<${item}> {\n    return this.page(${path}, { ...${m.input ? 'params' : '{}'} }, options);\n  }\n`;
  }
  const spec = [
    `method: '${m.httpMethod}'`,
    `path: ${path}`,
    ...(m.input ? [m.httpMethod === 'GET' ? 'query: { ...params }' : 'body: { ...params }'] : []),
    // A key for every change that honours one; a read bound to POST (a dry run) carries one too, so that it is retried
    // like a keyed call: repeating it changes nothing.
    ...((m.action.idempotent || m.action.effect.kind === 'read') && m.httpMethod !== 'GET' ? ['idempotent: true'] : []),
    'options',
  ].join(', ');
  const envelope = m.envelope ? `, '${camelKey(m.envelope)}'` : '';
  return `${summary}  ${visibility}${m.method}(${args}): Promise<${m.output}> {\n    return this.one({ ${spec} }${envelope});\n  }\n`;
}

/** Every REST-bound action's method: its resource class, its name, and whether a subclass shapes the public one. */
export const clientMethods = () =>
  methodsAndTypes().methods.map((m) => ({ action: m.action.name, resource: m.resource, method: m.method, internal: m.internal }));

/** Every generated client file and its text. */
export function generatedFiles(): Record<string, string> {
  const { methods, outputs, inputs, paramsTypes } = methodsAndTypes();
  return {
    [TYPES_FILE]: typesFile(outputs, inputs, paramsTypes),
    [RESOURCES_FILE]: resourcesFile(methods, outputs, paramsTypes),
    [EVENT_DATA_FILE]: eventData(),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = generatedFiles();
  const root = new URL('..', import.meta.url).pathname;
  if (process.argv.includes('--check')) {
    const stale = Object.entries(files).filter(([f, text]) => {
      try {
        return readFileSync(f, 'utf8') !== text;
      } catch {
        return true;
      }
    });
    if (stale.length) {
      console.error(`stale: ${stale.map(([f]) => f.replace(root, '')).join(', ')}: run npm run client:generate`);
      process.exit(1);
    }
  } else {
    for (const [f, text] of Object.entries(files)) {
      mkdirSync(dirname(f), { recursive: true });
      writeFileSync(f, text);
    }
    console.log(
      `wrote ${Object.keys(files)
        .map((f) => f.replace(root, ''))
        .join(', ')}`,
    );
  }
}
