// The console's GraphQL types (packages/console/src/schema.ts), generated from schema.graphql: every enum as a
// union of its values, every object, interface and input type as an interface. The console's operations declare
// their results as picks of these types, so `tsc` checks them against the schema. `npm run schema:print` rewrites
// the file with schema.graphql; test/graphql/schema-file.test.ts fails when it is stale.
import {
  buildSchema,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from 'graphql';

export const CONSOLE_TYPES_FILE = new URL('../packages/console/src/schema.ts', import.meta.url).pathname;

const SCALARS: Record<string, string> = { String: 'string', ID: 'string', Int: 'number', Float: 'number', Boolean: 'boolean' };

function tsType(type: GraphQLType, nullable = true): string {
  if (isNonNullType(type)) return tsType(type.ofType, false);
  const inner = isListType(type) ? `Array<${tsType(type.ofType)}>` : isScalarType(type) ? (SCALARS[type.name] ?? type.name) : type.name;
  return nullable ? `${inner} | null` : inner;
}

const field = (f: GraphQLField<unknown, unknown> | GraphQLInputField) => `  ${f.name}: ${tsType(f.type)};`;

export function consoleTypes(sdl: string): string {
  const schema = buildSchema(sdl);
  const out = [
    '// Generated from schema.graphql by scripts/console-types.ts (npm run schema:print): do not edit.',
    '/** DateTime: an RFC 3339 string on the wire. */',
    'export type DateTime = string;',
    '/** Any JSON value. */',
    'export type JSON = unknown;',
  ];
  const types = Object.values(schema.getTypeMap())
    .filter((t) => !t.name.startsWith('__'))
    .sort((a, b) => a.name.localeCompare(b.name));
  for (const t of types) {
    if (isEnumType(t))
      out.push(
        `export type ${t.name} = ${t
          .getValues()
          .map((v) => `'${v.name}'`)
          .join(' | ')};`,
      );
    else if (isObjectType(t) || isInterfaceType(t) || isInputObjectType(t)) {
      out.push(`export interface ${t.name} {`, ...Object.values(t.getFields()).map(field), '}');
    }
  }
  return `${out.join('\n')}\n`;
}
