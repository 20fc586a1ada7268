/**
 * What a local `$ref` (`#/components/...`, a JSON pointer with `~1` for `/` and `~0` for `~`) names in an OpenAPI
 * document: the tests that read the documents follow references with this, never a copy of it.
 */
export function followRef(doc: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

/** `node` itself, or what its local `$ref` names when it is a reference that resolves. */
export function resolveRef<T = unknown>(doc: unknown, node: T): T {
  const ref = (node as { $ref?: unknown } | null)?.$ref;
  if (typeof ref !== 'string') return node;
  const target = followRef(doc, ref);
  return (target === undefined ? node : target) as T;
}
