import { createServer } from 'node:net';

// The server runs with production semantics unless NODE_ENV says otherwise (tests set `test`): graphql-js
// reads NODE_ENV once, when it loads, to leave out its development-only checks, so it is set before the
// application is imported. GraphiQL, error masking and every other behaviour are the same either way.
process.env.NODE_ENV ??= 'production';
const { loadConfig } = await import('./config.ts');
const { startUpFailure } = await import('./runtime/start-up-failure.ts');

/** A failed start: one line on stderr (runtime/start-up-failure.ts), the stack only at LOG_LEVEL=debug, exit 1. */
function fail(err: unknown, settings?: Parameters<typeof startUpFailure>[1]): never {
  process.stderr.write(`${startUpFailure(err, settings)}\n`);
  if (process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace') process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
}

const config = (() => {
  try {
    return loadConfig();
  } catch (err) {
    fail(err);
  }
})();
const cluster = (await import('node:cluster')).default;
const settings = { databaseUrl: config.databaseUrl, metricsPort: config.metricsListen?.port };
// A port that is already taken is told before the application loads and the database opens (seconds on PGlite);
// the real listen still reports it if another process takes the port in between. A cluster's processes share the
// port their primary checked.
if (config.port !== 0 && cluster.isPrimary) await portFree(config.host, config.port).catch((err) => fail(err));
// PLATFORM_API_PROCESSES > 1: this process is the primary of N servers on one port (runtime/cluster.ts) and loads no application.
if (config.processes > 1 && cluster.isPrimary) {
  const { checkConnectionBudget, runPrimary } = await import('./runtime/cluster.ts');
  const { createLogger } = await import('./logger.ts');
  await checkConnectionBudget(config).catch((err) => fail(err, settings));
  await runPrimary(config, createLogger(config.logLevel));
}
const member = cluster.isWorker ? (await import('./runtime/cluster.ts')).joinCluster : undefined;
// The application is loaded only once the configuration holds: a bad setting is told in well under a second.
const { buildApp } = await import('./app.ts');
const { startBanner } = await import('./runtime/banner.ts');
// Opening the database takes the embedded data directory's lock: a second process on it stops here, before
// migrations and before binding the port.
const app = await buildApp(config).catch((err) => fail(err, settings));
const { log } = app.deps;
const peers = member?.(app.metrics.registry);
if (peers) {
  app.metrics.aggregate(peers.scrape);
  // The primary is gone (killed): nothing supervises this process any more, so it drains and exits.
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}

// Signals are handled from the first moment: a SIGTERM during start-up (e.g.
// while migrations run) waits for start to finish, then drains and exits 0.
let stopping = false;
let failed = false;
const started = app.start();
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'draining');
    started
      .then(() => app.stop())
      .then(
        () => process.exit(0),
        (err) => {
          if (failed) return; // a failed start is reported below
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  });
}
await started.catch(async (err) => {
  failed = true;
  // What did start (workers, the database and its lock) stops before the exit, within the shutdown grace.
  const grace = new Promise((resolve) => setTimeout(resolve, config.shutdownGraceMs).unref());
  await Promise.race([app.stop().catch(() => {}), grace]);
  fail(err, settings);
});
const banner = startBanner({
  config,
  urls: app.urls,
  database: app.deps.db.kind,
  nodeEnv: process.env.NODE_ENV,
  metricsUrl: app.metricsUrl,
  wroteCredentials: !!app.credentials,
});
// In a cluster the primary prints the banner once every process listens.
if (peers) peers.ready(banner);
else console.log(banner);

/** Resolves when `host:port` can be bound now (the probe closes at once); rejects with the bind's own error. */
function portFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
