/**
 * Imported first by the benchmarks that run the server in their own process: it runs with production semantics, as
 * `npm start` runs it (src/main.ts). graphql-js reads NODE_ENV once, when it loads, to leave out its
 * development-only checks, so this runs before anything imports it.
 */
process.env.NODE_ENV ??= 'production';
