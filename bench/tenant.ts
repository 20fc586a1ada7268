/**
 * Benchmark set-up through the real HTTP routes: an organization created by
 * the operator, and one platform token holding `scopes`.
 */
export function jsonPoster(origin: string) {
  return async (path: string, body: unknown, token: string): Promise<any> => {
    const res = await fetch(origin + path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
}

export async function benchTenant(origin: string, operatorToken: string, scopes: string[]) {
  const post = jsonPoster(origin);
  const slug = `bench-${Date.now()}`;
  const created = await post('/operator/organizations', { name: slug, slug, brands: [{ slug: 'main', name: 'Main' }] }, operatorToken);
  const tok = await post('/platform/tokens/create', { name: 'bench', scopes }, created.user_token);
  return { post, created, secret: tok.secret as string };
}
