/**
 * The HTTP load generator of bench/run.ts, in a worker thread, so the
 * server's thread (the benchmark's main thread, where the API and the
 * baselines run) does none of the load generator's work and its CPU time is
 * the server's alone. One autocannon run per message, in this thread (no
 * nested workers). Plain JavaScript: tsx's loader does not reach worker
 * threads on Node 20.
 *
 * Message in: a LoadRequest; out: a LoadResult (both typed in bench/measure.ts).
 */
import { randomUUID } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import autocannon from 'autocannon';

parentPort.on('message', async (o) => {
  const body = o.body;
  const opts = {
    url: o.url,
    method: o.method ?? 'GET',
    headers: o.headers,
    body,
    connections: o.connections,
    duration: o.seconds,
    // Every `[<uuid>]` in the body becomes a fresh UUID per request.
    ...(o.uniqueBody && body
      ? { requests: [{ setupRequest: (req) => ({ ...req, body: body.replaceAll('[<uuid>]', randomUUID()) }) }] }
      : {}),
  };
  // Off the main thread autocannon returns its raw histograms; aggregate them here.
  const r = autocannon.aggregateResult([await autocannon(opts)], opts);
  parentPort.postMessage({
    ok: r.requests.total - r.non2xx,
    non2xx: r.non2xx,
    errors: r.errors,
    seconds: r.duration || o.seconds,
    p50: r.latency.p50,
    p99: r.latency.p99,
  });
});
