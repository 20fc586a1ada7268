// Builds the client package (packages/client: the client library and the
// user-facing `platform` commands) to JavaScript and declaration files in
// packages/client/dist, which this project's `exports` point at, so
// `import ... from 'platform-api'` works from plain Node; the `platform` CLI's
// entry (src/cli/platform.ts, which imports that build) to dist/cli, which
// bin/platform.mjs runs without a TypeScript loader; and the web console
// (packages/console) to the native ES modules the server serves at /console.
// Run on `npm install` (postinstall); without typescript (an install that
// omits dev dependencies) it says so and skips: the server itself runs the
// package's TypeScript sources through tsx, and /console answers 503 until built.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  console.warn(
    'build-client: typescript is not installed; packages/client/dist, dist/cli and packages/console/dist not built (npm install with dev dependencies builds them)',
  );
  process.exit(0);
}
// The client first: the CLI's entry imports its build.
for (const project of ['packages/client', 'src/cli', 'packages/console']) {
  const result = spawnSync(process.execPath, [tsc, '-p', new URL(`../${project}`, import.meta.url).pathname], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
