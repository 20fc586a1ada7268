import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { buildSchema, findBreakingChanges, findDangerousChanges } from 'graphql';
import { expect, it } from 'vitest';
import { followRef } from '../support/openapi-ref.ts';

/**
 * The API stays compatible with its baseline (test/repository/api-baseline/, the documents as of 0d09f07, before
 * issue 32 derived them from the registry): every change a client could notice, other than an addition, is one of
 * the DECLARED changes below, each with its CHANGELOG entry. A refactor that changes a type, drops a field or makes
 * an input required fails here. When a version is released, its documents become the new baseline and the list
 * starts empty again (docs/internals/api-compatibility.md).
 */
const DECLARED = {
  graphql: [
    // CHANGELOG, issue 32: timestamps are the declared DateTime scalar (the same RFC 3339 string on the wire).
    /^FIELD_CHANGED_KIND \w+\.\w+ changed type from String(!?) to DateTime\1\.$/,
    // CHANGELOG, issue 32: EventSubject.id is ID!, like every other object id.
    /^FIELD_CHANGED_KIND EventSubject\.id changed type from String! to ID!\.$/,
  ],
  openapi: [] as RegExp[],
};

const read = (name: string) => readFileSync(new URL(name, import.meta.url), 'utf8');
/** A baseline document: stored gzipped (the three OpenAPI documents are 2.2 MB as text). */
const baseline = (name: string) => gunzipSync(readFileSync(new URL(`./api-baseline/${name}.gz`, import.meta.url))).toString('utf8');

it('schema.graphql has no breaking or dangerous change against the baseline but the declared ones', () => {
  const before = buildSchema(baseline('schema.graphql'));
  const after = buildSchema(read('../../schema.graphql'));
  const changes = [...findBreakingChanges(before, after), ...findDangerousChanges(before, after)].map((c) => `${c.type} ${c.description}`);
  expect(changes.filter((c) => !DECLARED.graphql.some((d) => d.test(c)))).toEqual([]);
  // Each declaration still matches something: a stale one would let a later change through unseen.
  for (const d of DECLARED.graphql)
    expect(
      changes.some((c) => d.test(c)),
      String(d),
    ).toBe(true);
});

/** Words that document rather than define: they may change freely. */
const PROSE = new Set(['description', 'summary', 'example', 'examples', 'title', 'tags', 'externalDocs', 'info', 'servers']);

/**
 * The document as a set of `path = value` facts, keys sorted; a list of scalars (enum, required, type) is one fact per
 * item. A local `$ref` is read as what it names, so moving a shape into `components` (or out of it) changes no fact a
 * client could notice; a reference inside what it names is left as written (no recursion).
 */
function facts(doc: unknown): Set<string> {
  const out = new Set<string>();
  const resolve = (v: unknown, seen: Set<string>): [unknown, Set<string>] => {
    const ref = (v as { $ref?: unknown } | null)?.$ref;
    if (typeof ref !== 'string' || seen.has(ref)) return [v, seen];
    const target = followRef(doc, ref);
    return target === undefined ? [v, seen] : resolve(target, new Set([...seen, ref]));
  };
  const walk = (raw: unknown, path: string, refs = new Set<string>()): void => {
    const [v, seen] = resolve(raw, refs);
    if (Array.isArray(v)) {
      if (v.every((x) => x === null || typeof x !== 'object')) for (const x of v) out.add(`${path}[] = ${JSON.stringify(x)}`);
      else
        v.forEach((x, i) => {
          const item = resolve(x, seen)[0] as { name?: string; $ref?: string };
          walk(x, `${path}[${item.name ?? item.$ref ?? i}]`, seen);
        });
    } else if (v && typeof v === 'object') {
      for (const k of Object.keys(v).sort()) if (!PROSE.has(k)) walk((v as Record<string, unknown>)[k], `${path}/${k}`, seen);
    } else out.add(`${path} = ${JSON.stringify(v)}`);
  };
  walk(doc, '');
  return out;
}

/** The operation (`/paths//<path>/<method>`) a fact belongs to, if any. */
const operationOf = (fact: string) => /^\/paths\/.*?\/(get|post|put|patch|delete)\//.exec(fact)?.[0];

/** Facts a client could notice: anything removed or changed, and an input of an existing operation that became required. */
function incompatible(before: Set<string>, after: Set<string>): string[] {
  const removed = [...before].filter((f) => !after.has(f)).map((f) => `- ${f}`);
  const operations = new Set([...before].map(operationOf));
  const newlyRequired = [...after]
    .filter((f) => !before.has(f) && /\/(requestBody|parameters)\b.*\/required(\[\])? = /.test(f) && !f.endsWith('= false'))
    // A new operation's required inputs are part of an addition: no client calls it yet.
    .filter((f) => operations.has(operationOf(f)))
    .map((f) => `+ ${f}`);
  return [...removed, ...newlyRequired];
}

it.each(['surface-a', 'surface-b', 'dashboard'])(
  'docs/openapi/%s.json removes, changes or newly requires nothing against the baseline but the declared changes',
  (name) => {
    const before = facts(JSON.parse(baseline(`${name}.json`)));
    const after = facts(JSON.parse(read(`../../docs/openapi/${name}.json`)));
    const found = incompatible(before, after).filter((c) => !DECLARED.openapi.some((d) => d.test(c)));
    expect(found).toEqual([]);
  },
);

it('the comparison sees a removed response field, a changed type and a newly required input', () => {
  const before = facts({
    paths: { '/x': { post: { requestBody: { required: false }, responses: { 200: { properties: { a: { type: 'string' } } } } } } },
  });
  const after = facts({ paths: { '/x': { post: { requestBody: { required: true }, responses: { 200: { properties: {} } } } } } });
  const typed = facts({
    paths: { '/x': { post: { requestBody: { required: false }, responses: { 200: { properties: { a: { type: 'integer' } } } } } } },
  });
  expect(incompatible(before, after)).toEqual([
    '- /paths//x/post/requestBody/required = false',
    '- /paths//x/post/responses/200/properties/a/type = "string"',
    '+ /paths//x/post/requestBody/required = true',
  ]);
  expect(incompatible(before, typed)).toEqual(['- /paths//x/post/responses/200/properties/a/type = "string"']);
  // A new operation with a required input is an addition.
  const added = facts({
    paths: {
      '/x': { post: { requestBody: { required: false }, responses: {} } },
      '/y/{id}': { post: { requestBody: { required: true } } },
    },
  });
  expect(incompatible(facts({ paths: { '/x': { post: { requestBody: { required: false }, responses: {} } } } }), added)).toEqual([]);
  // An added response field is compatible.
  expect(
    incompatible(
      typed,
      facts({
        paths: {
          '/x': {
            post: {
              requestBody: { required: false },
              responses: { 200: { properties: { a: { type: 'integer' }, b: { type: 'string' } } } },
            },
          },
        },
      }),
    ),
  ).toEqual([]);
});
