import { defineConfig } from 'vitest/config';

import { createRequire } from 'node:module';
import SlowestFirst from './test/support/sequencer.ts';

const require = createRequire(import.meta.url);

export default defineConfig({
  // One graphql module instance for test code and libraries alike (graphql 16
  // ships CJS and ESM builds; mixing them fails with "from another realm").
  resolve: { alias: { graphql: require.resolve('graphql') } },
  test: {
    include: ['test/**/*.test.ts'],
    // Migrates once per run; every file's database is a copy of that template.
    globalSetup: ['test/support/global-setup.ts', 'test/support/brokers-setup.ts'],
    // Each file starts its own server on its own database (in-memory PGlite, or a
    // fresh database in TEST_DATABASE_URL's cluster), so files run in parallel.
    pool: 'forks',
    // Files share their worker's module cache: importing the app (Prisma, the Pothos schema) once per worker instead of
    // once per file cuts the suite's import time from ~400 s to ~25 s. Safe because no module keeps per-test state:
    // every file builds its own app, database and clock (test/support/kit.ts), and nothing is mocked by module.
    isolate: false,
    // Tests mostly wait on sockets and the database: on a 2-core machine the
    // default (cores - 1 = one worker) leaves the CPU idle, four keep it busy.
    maxWorkers: 4,
    // The slowest files first, whether or not this checkout has run the suite before (test/support/sequencer.ts).
    sequence: { sequencer: SlowestFirst },
    // Generous: a shared 2-core machine can be slow; every wait inside a test is bounded on its own.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll's own default (1 s) is a timing in disguise: a page or a process answering in 1.2 s beside a busy CI
    // pass is not a failure. A poll that meets its condition returns at once, so this only delays a real failure.
    expect: { poll: { timeout: 15_000 } },
    env: { NODE_ENV: 'test' },
  },
});
