/**
 * Benchmark set-up through the real HTTP routes: an organization created by
 * the operator, and one platform token holding `scopes`.
 */
export function jsonPoster(origin: string) {
  return async (path: string, body: unknown, token: string): Promise<any> => {
    const res = await fetch(origin + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
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

export const BENCH_OPERATOR = 'op_bench_0123456789abcdef';

/**
 * The API's environment under benchmark: quiet, port 0, no bootstrap, and no request budget (per token or per
 * organization): the benchmark measures the stack, and a refused request would cap the rate it reports.
 */
export function benchEnv(dataDir: string, databaseUrl: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    // autocannon cuts its connections mid-request when a slice ends; the server would log each as a parse error.
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'fatal',
    HOST: '127.0.0.1',
    PORT: '0',
    BOOTSTRAP: '0',
    OPERATOR_TOKEN: BENCH_OPERATOR,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    RATE_LIMIT_PER_SECOND: '10000000',
    RATE_LIMIT_BURST: '10000000',
    ORGANIZATION_RATE_LIMIT_PER_SECOND: '10000000',
    ORGANIZATION_RATE_LIMIT_BURST: '10000000',
    // Every load client is on 127.0.0.1: one address's connection shares would cap the benchmark, not the stack.
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1000',
    HTTP_MAX_STREAMS_PER_ADDRESS: '10000',
  };
}
