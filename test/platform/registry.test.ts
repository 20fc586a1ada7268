import { getNamedType, isObjectType } from 'graphql';
import { expect } from 'vitest';
import { ACTIONS, REGISTRY } from '../../src/domain/registry.ts';
import { surfaceBRoutes } from '../../rest/mount.ts';
import { OUTSIDE_THE_SEAM } from '../../rest/outside-seam.ts';
import { REST_BINDINGS, restActionRoutes } from '../../rest/platform/bindings.ts';
import { boundFields } from '../../src/graphql/bound-fields.ts';
import { schema } from '../../src/graphql/schema/index.ts';
import { OPENAPI_FILES } from '../../scripts/print-openapi.ts';
import { appTest, type TestApp } from '../support/kit.ts';

/**
 * The registry (src/domain/registry.ts) is the one list the fronts walk: every
 * action is bound exactly once on each front its `fronts` names and on no
 * other, every documented REST route is an action's binding or a listed
 * exception (rest/outside-seam.ts), and `node(id:)` answers every kind an
 * action retrieves with the type of that action's own field.
 */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

test('every action is bound exactly once on each front it names, and on no other', () => {
  const routes = restActionRoutes(t.app.deps);
  const fields = boundFields(schema);
  for (const action of ACTIONS) {
    expect(routes.filter((r) => r.action === action).length, `${action.name} on REST`).toBe(action.fronts.includes('rest') ? 1 : 0);
    expect(fields.get(action.name)?.length ?? 0, `${action.name} on GraphQL: ${fields.get(action.name)?.map((f) => f.path)}`).toBe(
      action.fronts.includes('graphql') ? 1 : 0,
    );
  }
  // Nothing is bound to a name the registry does not hold.
  const names = new Set(ACTIONS.map((a) => a.name));
  expect([...fields.keys()].filter((n) => !names.has(n))).toEqual([]);
  expect(Object.keys(REST_BINDINGS).filter((n) => !names.has(n))).toEqual([]);
});

test("every action's name is its capability's, and names, operationIds and routes are unique", () => {
  for (const table of Object.values(REGISTRY))
    for (const action of Object.values(table)) expect(action.name.startsWith(`${action.capability.name}.`), action.name).toBe(true);
  expect(new Set(ACTIONS.map((a) => a.name)).size).toBe(ACTIONS.length);
  const bindings = Object.values(REST_BINDINGS);
  expect(new Set(bindings.map((b) => b.operationId)).size).toBe(bindings.length);
  expect(new Set(bindings.map((b) => `${b.method} ${b.path}`)).size).toBe(bindings.length);
});

test('every documented route is an action binding or a listed exception, and every exception is a route', async () => {
  const operations: string[] = [];
  for (const path of Object.keys(OPENAPI_FILES)) {
    const doc = (await t.http.get(path)).body as { paths: Record<string, Record<string, { operationId: string }>> };
    for (const ops of Object.values(doc.paths)) for (const op of Object.values(ops)) operations.push(op.operationId);
  }
  const bound = new Set(Object.values(REST_BINDINGS).map((b) => b.operationId));
  const neither = operations.filter((id) => !bound.has(id) && !(id in OUTSIDE_THE_SEAM));
  expect(neither, 'bind an action in rest/platform/bindings.ts or list the route in rest/outside-seam.ts').toEqual([]);
  expect(operations.filter((id) => bound.has(id) && id in OUTSIDE_THE_SEAM)).toEqual([]);
  expect(Object.keys(OUTSIDE_THE_SEAM).filter((id) => !operations.includes(id))).toEqual([]);
  expect([...bound].filter((id) => !operations.includes(id))).toEqual([]);
});

test('node(id:) answers each kind an action retrieves, with the Node type its own field returns', async () => {
  const fields = new Map<string, string>();
  for (const f of Object.values(schema.getQueryType()!.getFields()))
    if (f.extensions?.action) fields.set(f.extensions.action as string, getNamedType(f.type).name);
  const retrieving = ACTIONS.filter((a) => a.retrieves);
  expect(new Set(retrieving.map((a) => a.retrieves)).size).toBe(retrieving.length);
  for (const action of retrieving) {
    expect(action.effect.kind, action.name).toBe('read');
    expect(action.params, action.name).toEqual(['id']);
    const type = schema.getType(fields.get(action.name) ?? '');
    expect(isObjectType(type) && type.getInterfaces().some((i) => i.name === 'Node'), action.name).toBe(true);
  }
});

test('no Surface B route is shadowed by one mounted before it (a literal segment must match before a parameter)', () => {
  const routes = surfaceBRoutes(t.app.deps);
  const pattern = (path: string) => new RegExp(`^${path.replace(/:[a-z_]+/g, '[^/]+')}$`);
  const shadowed = routes.flatMap((later, j) =>
    routes
      .slice(0, j)
      .filter((earlier) => earlier.method === later.method && pattern(earlier.path).test(later.path))
      .map((earlier) => `${later.method} ${later.path} behind ${earlier.path}`),
  );
  expect(shadowed).toEqual([]);
});
