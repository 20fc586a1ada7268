#!/usr/bin/env node
// Launcher for the `platform` CLI: its built JavaScript (dist/cli/platform.js and packages/client/dist, which
// `npm install` builds; `npm run build:client` rebuilds them). No TypeScript loader runs here: only the server's
// commands (start, migrate, bootstrap) load one, for the server's sources.
try {
  await import('../dist/cli/platform.js');
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !/dist[\\/]cli[\\/]platform\.js|packages[\\/]client[\\/]dist/.test(err.message)) throw err;
  process.stderr.write('error: the platform CLI is not built: run `npm install` (or `npm run build:client`) in the repository\n');
  process.exit(2);
}
