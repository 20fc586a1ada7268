import { getNamedType, isObjectType, type GraphQLSchema } from 'graphql';

/** A field bound to an action (src/graphql/action.ts marks it with `extensions.action`). */
export interface BoundField {
  /** `Type.field`, e.g. `Query.program`. */
  path: string;
  /** The named type the field returns. */
  returns: string;
}

const read = new WeakMap<GraphQLSchema, Map<string, BoundField[]>>();

/** Every field bound to each action, by action name; read once per schema. */
export function boundFields(schema: GraphQLSchema): ReadonlyMap<string, readonly BoundField[]> {
  let bound = read.get(schema);
  if (!bound) {
    bound = new Map();
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type)) continue;
      for (const f of Object.values(type.getFields())) {
        const name = f.extensions?.action as string | undefined;
        if (name) bound.set(name, [...(bound.get(name) ?? []), { path: `${type.name}.${f.name}`, returns: getNamedType(f.type).name }]);
      }
    }
    read.set(schema, bound);
  }
  return bound;
}
