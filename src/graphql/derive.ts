import type { ArgBuilder, ArgumentRef, InputObjectRef, InterfaceRef, ObjectRef } from '@pothos/core';
import { z } from 'zod';
import { isoTime, shape } from '../domain/shape.ts';
import { builder } from './builder.ts';

/**
 * GraphQL types and arguments derived from the domain's zod schemas: the
 * presenter's schema is the only hand-written shape of a resource. A snake_case
 * key becomes a camelCase field (`created_at`: `createdAt`), `id` an `ID`, a
 * timestamp (src/domain/shape.ts) a `DateTime`, an int an `Int`, any other
 * number a `Float`, a closed set its enum (by its values: `enumFor`), a nested
 * object or list its type, anything open (records, unions, unknown) `JSON`; a
 * field is nullable when zod lets it be null or absent, described by its
 * `.describe()`. The `object` discriminator is left out. Names and type
 * descriptions are GraphQL's, given where a type is declared (`objectType`,
 * `inputType`); a nested object is found by identity, so it is declared once
 * whichever type holds it.
 */
type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
type Shape = z.core.$ZodType;
type Def = { type: string; [k: string]: unknown };

const defOf = (s: Shape) => (s as unknown as { _zod: { def: Def } })._zod.def;

/** `starting_after`: `startingAfter`; `created[gte]`: `createdGte`. */
export const camel = (key: string) => key.replace(/[_[\]]+(\w)/g, (_m, c: string) => c.toUpperCase()).replace(/\W/g, '');

interface Core {
  /** The schema under its optional, nullable and default wrappers (of a pipe, the side the client sends or reads). */
  schema: Shape;
  nullable: boolean;
  optional: boolean;
  timestamp: boolean;
  description?: string;
}

/** Looks through the wrappers that do not change a value's kind, collecting what they say. */
function unwrap(s: Shape, io: 'input' | 'output' = 'output'): Core {
  let nullable = false;
  let optional = false;
  let timestamp = false;
  let description: string | undefined;
  let cur = s;
  for (;;) {
    description ??= (cur as { description?: string }).description;
    if (shape.get(cur as z.ZodType)?.timestamp) timestamp = true;
    const def = defOf(cur);
    if (def.type === 'nullable') nullable = true;
    else if (def.type === 'optional' || def.type === 'default' || def.type === 'prefault') optional = true;
    else if (def.type === 'pipe') {
      // A parsed input is what the client sends (`in`), unless `in` is a preprocess step: then the schema it feeds.
      const inner = def.in as Shape;
      cur = io === 'input' && defOf(inner).type !== 'transform' ? inner : (def.out as Shape);
      continue;
    } else if (def.type !== 'readonly' && def.type !== 'catch') break;
    cur = def.innerType as Shape;
  }
  // `DateTime` says what the shared timestamp's own description says.
  if (timestamp && description === isoTime.description) description = undefined;
  return { schema: cur, nullable, optional, timestamp, description };
}

const enums = new Map<string, unknown>();
const valuesKey = (values: readonly unknown[]) => JSON.stringify([...values].map(String).sort());

/** Registers a GraphQL enum as the type of every zod enum with exactly these values (src/graphql/schema/enums.ts). */
export function enumFor(values: readonly string[], ref: unknown): void {
  const key = valuesKey(values);
  if (enums.has(key)) throw new Error(`Two GraphQL enums have the values ${key}`);
  enums.set(key, ref);
}

const objects = new WeakMap<Shape, ObjectRef<Types, unknown>>();
const inputs = new WeakMap<Shape, InputObjectRef<Types, object>>();

/** A leaf's GraphQL type: an enum without a GraphQL name (e.g. JOSE's `EdDSA`) stays a String. */
function leaf(core: Core, key: string, ids: boolean): unknown {
  const def = defOf(core.schema);
  switch (def.type) {
    case 'string':
      return core.timestamp ? 'DateTime' : ids && key === 'id' ? 'ID' : 'String';
    case 'number':
      return (core.schema as unknown as { isInt?: boolean }).isInt ? 'Int' : 'Float';
    case 'boolean':
      return 'Boolean';
    case 'enum':
      return enums.get(valuesKey(Object.values(def.entries as object))) ?? 'String';
    case 'literal': {
      const [v] = def.values as unknown[];
      return typeof v === 'boolean' ? 'Boolean' : typeof v === 'number' ? (Number.isInteger(v) ? 'Int' : 'Float') : 'String';
    }
    default:
      return 'JSON';
  }
}

interface FieldType {
  type: unknown;
  /** Pothos nullability: of the value, or of a list and its items. */
  nullable: boolean | { list: boolean; items: boolean };
  description?: string;
}

function fieldType(s: Shape, key: string, where: string, io: 'input' | 'output'): FieldType {
  const core = unwrap(s, io);
  const nullable = core.nullable || core.optional;
  const def = defOf(core.schema);
  if (def.type === 'array') {
    const item = unwrap(def.element as Shape, io);
    const inner = named(item, key, where, io);
    return { type: [inner], nullable: { list: nullable, items: item.nullable || item.optional }, description: core.description };
  }
  return { type: named(core, key, where, io), nullable, description: core.description };
}

function named(core: Core, key: string, where: string, io: 'input' | 'output'): unknown {
  if (defOf(core.schema).type !== 'object') return leaf(core, key, io === 'output');
  const ref = (io === 'output' ? objects : inputs).get(core.schema);
  if (!ref) throw new Error(`${where}.${key}: declare its ${io === 'output' ? 'objectType' : 'inputType'} (a GraphQL name) first`);
  return ref;
}

const nullableOf = (s: Shape) => {
  const core = unwrap(s);
  return core.nullable || core.optional;
};

const entries = (s: Shape) => Object.entries(defOf(unwrap(s).schema).shape as Record<string, Shape>);
/** The `object` discriminator says what REST's JSON is; a GraphQL type says it by its name. */
const isDiscriminator = (key: string, s: Shape) => key === 'object' && defOf(unwrap(s).schema).type === 'literal';

export interface ObjectTypeOptions {
  description: string;
  /** `Node` where `node(id:)` fetches the type (src/graphql/schema/node.ts); a tier_ or msr_ id is prefixed but has no lookup. */
  interfaces?: InterfaceRef<Types, unknown>[];
  /** Other zod objects of the same shape shown as this type (e.g. an event's and an operation's `subject`). */
  sameAs?: Shape[];
  /** Keys GraphQL shows otherwise (a resolved relation added by `builder.objectFields`). */
  omit?: readonly string[];
  /** Keys shown as `JSON` although zod types them (an open object, e.g. an operation's error, which carries more than its code). */
  json?: readonly string[];
}

/** The GraphQL object type of a zod object: one field per key (see above). Extend it with `builder.objectFields`. */
export function objectType<S extends z.ZodObject>(name: string, schema: S, o: ObjectTypeOptions): ObjectRef<Types, z.output<S>> {
  const ref = builder.objectRef<z.output<S>>(name);
  for (const s of [schema, ...(o.sameAs ?? [])]) objects.set(unwrap(s).schema, ref as ObjectRef<Types, unknown>);
  ref.implement({
    description: o.description,
    ...(o.interfaces ? { interfaces: o.interfaces as never } : {}),
    fields: (t) =>
      Object.fromEntries(
        entries(schema)
          .filter(([key, s]) => !isDiscriminator(key, s) && !o.omit?.includes(key))
          .map(([key, s]) => {
            const f = o.json?.includes(key)
              ? { ...fieldType(z.unknown(), key, name, 'output'), nullable: nullableOf(s) }
              : fieldType(s, key, name, 'output');
            const options = { type: f.type, nullable: f.nullable, description: f.description };
            const field = camel(key);
            // A key GraphQL names alike is exposed: no resolver, so compiled execution reads the property inline
            // (graphql-jit calls a resolver, with its info and error handling, for every field of every item).
            if (field === key) return [field, t.expose(key as never, options as never)];
            return [field, t.field({ ...options, resolve: (p: Record<string, unknown>) => p[key] } as never)];
          }),
      ),
  });
  return ref;
}

/** The GraphQL input type of a zod object taken by an action (an endpoint's filter, a distribution's deployments). */
export function inputType(
  name: string,
  /** A zod object, or an optional or nullable one (as an input's key holds it). */
  schema: Shape,
  o: { description: string; ids?: readonly string[] },
): InputObjectRef<Types, object> {
  const ref = builder.inputRef<object>(name);
  inputs.set(unwrap(schema).schema, ref);
  ref.implement({
    description: o.description,
    fields: (t) =>
      Object.fromEntries(entries(schema).map(([key, s]) => [camel(key), t.field(inputField(s, key, name, o.ids?.includes(key)) as never)])),
  });
  return ref;
}

function inputField(s: Shape, key: string, where: string, id = false) {
  const f = fieldType(s, key, where, 'input');
  const required =
    f.nullable === false ? true : typeof f.nullable === 'object' ? { list: !f.nullable.list, items: !f.nullable.items } : false;
  return { type: id && f.type === 'String' ? 'ID' : f.type, required, description: f.description };
}

export interface DerivedArgs {
  /** The field's arguments: the path ids, then one per input key. */
  args: Record<string, ArgumentRef<Types, unknown>>;
  /** The action's params and input from the arguments (omitted stays omitted; null only where zod takes null). */
  invocation: (args: Record<string, unknown>) => { params: Record<string, string>; input: Record<string, unknown> };
  /** Input key: argument name, for errors that name a parameter. */
  argNames: Record<string, string>;
}

export interface ArgOptions {
  /** GraphQL names of path ids that differ from their own (`id`: `program`); every path id is an `ID!`. */
  params?: Readonly<Record<string, string>>;
  /** Input keys that are `ID`s besides the path ids (e.g. `program` where the argument always was one). */
  ids?: readonly string[];
  /** Input keys GraphQL does not take as arguments (a connection's paging). */
  skip?: readonly string[];
}

/** A field's arguments derived from an action's path ids and input schema. */
export function argsOf(arg: ArgBuilder<Types>, params: readonly string[], input: Shape, o: ArgOptions = {}): DerivedArgs {
  const keys = entries(input).filter(([key]) => !o.skip?.includes(key));
  const paramNames = params.map((p) => [p, o.params?.[p] ?? camel(p)] as const);
  const args: DerivedArgs['args'] = {};
  for (const [, name] of paramNames) args[name] = arg.id({ required: true });
  for (const [key, s] of keys) args[camel(key)] = arg(inputField(s, key, 'input', o.ids?.includes(key)) as never);
  return {
    args,
    invocation: (a) => ({
      params: Object.fromEntries(paramNames.map(([p, name]) => [p, String(a[name])])),
      input: toInput(keys, a),
    }),
    argNames: Object.fromEntries(keys.map(([key]) => [key, camel(key)]).filter(([key, name]) => key !== name)),
  };
}

/** GraphQL values to the input's snake_case keys, nested objects and lists of them too. */
function toInput(keys: [string, Shape][], a: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of keys) {
    const v = a[camel(key)];
    if (v === undefined) continue;
    const core = unwrap(s, 'input');
    if (v === null) {
      // GraphQL cannot tell "absent" from null for a nullable argument: null reaches the action only where it means something (a clear).
      if (core.nullable) out[key] = null;
      continue;
    }
    out[key] = convert(core.schema, v);
  }
  return out;
}

function convert(s: Shape, v: unknown): unknown {
  const def = defOf(s);
  if (def.type === 'object') return toInput(entries(s), v as Record<string, unknown>);
  if (def.type === 'array' && Array.isArray(v)) {
    const item = unwrap(def.element as Shape, 'input').schema;
    return v.map((x) => (x == null ? x : convert(item, x)));
  }
  return v;
}
