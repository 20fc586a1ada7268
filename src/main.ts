import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';

const config = loadConfig();
const app = await buildApp(config);
await app.start();
const { log } = app.deps;
const u = app.urls;
console.log(
  [
    '',
    `Platform API listening (${app.deps.db.kind === 'pglite' ? `embedded PGlite in ${config.dataDir}` : 'PostgreSQL'})`,
    `  Surface A          ${u.base_url}   (OpenAPI: ${u.base_url}/openapi.json)`,
    `  Token management   ${u.dashboard_base_url}/platform/tokens`,
    `  Surface B          ${u.api_origin}/v1/platform`,
    `  GraphQL            ${u.graphql_url}   (GraphiQL in a browser, graphql-ws on the same path)`,
    `  Operator           ${u.api_origin}/operator`,
    `  Health             ${u.api_origin}/healthz  ${u.api_origin}/readyz`,
    app.credentials
      ? `  Credentials        written to ${config.bootstrapFile} (mode 0600)`
      : config.bootstrap
        ? `  Credentials        database already bootstrapped; see ${config.bootstrapFile}`
        : '',
    '',
  ]
    .filter((l) => l !== '')
    .join('\n'),
);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'draining');
    app.stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
