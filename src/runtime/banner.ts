import type { ServiceUrls } from '../domain/organization/bootstrap.ts';
import type { Config } from '../config.ts';

export interface BannerInput {
  config: Pick<Config, 'role' | 'dataDir' | 'bootstrap' | 'bootstrapFile'> & Partial<Pick<Config, 'processes'>>;
  urls: ServiceUrls;
  database: 'pglite' | 'postgres';
  nodeEnv: string | undefined;
  /** The separate metrics listener's URL (METRICS_LISTEN), when there is one. */
  metricsUrl?: string;
  /** Whether this start wrote the development credentials. */
  wroteCredentials: boolean;
}

/**
 * What `npm start` prints once it listens: one line saying what runs where, then one line per URL it serves (a
 * name, the URL to copy, what it is for), so a newcomer can open each. A worker serves only its probes.
 */
export function startBanner({ config, urls: u, database, nodeEnv, metricsUrl, wroteCredentials }: BannerInput): string {
  const origin = u.api_origin;
  const processes = (config.processes ?? 1) > 1 ? `; ${config.processes} processes` : '';
  const where = `${database === 'pglite' ? `embedded PGlite in ${config.dataDir}` : 'PostgreSQL'}; NODE_ENV=${nodeEnv}${processes}`;
  const row = (name: string, url: string, what = '') => `  ${name.padEnd(12)} ${what ? `${url.padEnd(origin.length + 17)} ${what}` : url}`;
  const rows =
    config.role === 'worker'
      ? [`Platform API worker running (${where}): webhook delivery, operations, maintenance; no API routes`]
      : [
          `Platform API listening on ${origin} (${where}${config.role === 'api' ? '; API only, background workers run elsewhere' : ''})`,
          row('Console', `${origin}/console`, 'in a browser: live feed, webhooks, operations, tokens'),
          row('GraphQL', u.graphql_url, 'GraphiQL in a browser; graphql-ws on the same path'),
          row('REST', `${origin}/v1/platform`, 'Surface B (OpenAPI: /v1/platform/openapi.json)'),
          row('Docs', `${origin}/docs`, 'guides and the API reference'),
          row('Surface A', u.base_url, 'scope executor (OpenAPI: /api/openapi.json)'),
          row('Tokens', `${u.dashboard_base_url}/platform/tokens`, 'token management (dashboard user token)'),
          row('Operator', `${origin}/operator`, 'kill switch, wallets (operator token)'),
        ];
  const metrics = metricsUrl
    ? row('Metrics', metricsUrl, 'Prometheus (no credentials on this listener)')
    : row('Metrics', `${origin}/metrics`, 'Prometheus (operator token)');
  const credentials = wroteCredentials
    ? row('Credentials', config.bootstrapFile, 'written now (mode 0600)')
    : config.bootstrap
      ? row('Credentials', config.bootstrapFile, 'the database was already bootstrapped')
      : undefined;
  return [...rows, metrics, `  ${'Health'.padEnd(12)} ${origin}/healthz  ${origin}/readyz`, credentials]
    .filter((l) => l !== undefined)
    .join('\n');
}
