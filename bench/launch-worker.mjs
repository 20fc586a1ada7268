/**
 * The operations load of bench/run.ts (scenario 7) and bench/operations.ts,
 * in a worker thread, as bench/load-worker.mjs is for plain HTTP load: the
 * server's thread does none of the client's work. It is a client as an agent
 * and a dashboard are: `concurrency` launchers each POST
 * /v1/platform/distributions (sandbox, immediate success) and wait for their
 * operation's terminal event on a live SSE subscription (`POST /graphql`,
 * `Accept: text/event-stream`) that this thread holds open, then launch
 * again. Plain JavaScript: tsx's loader does not reach worker threads on
 * Node 20.
 *
 * Message in: a LaunchRequest; out: a LaunchResult (both typed in bench/measure.ts).
 */
import { randomUUID } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

const TERMINAL = ['operation.succeeded', 'operation.failed', 'operation.canceled'];
const SUBSCRIPTION = `subscription($types: [String!]) { events(types: $types) { operation } }`;

/** Opens the SSE subscription; resolves once the server has sent its first byte (the subscription is live). */
async function subscribe(o, onTerminal) {
  const abort = new AbortController();
  const res = await fetch(`${o.origin}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${o.secret}`, accept: 'text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ query: SUBSCRIPTION, variables: { types: TERMINAL } }),
    signal: abort.signal,
  });
  if (res.status !== 200) throw new Error(`subscription: HTTP ${res.status} ${await res.text()}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let live;
  const started = new Promise((resolve) => (live = resolve));
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        live();
        const at = performance.now();
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          for (const line of buffer.slice(0, end).split('\n')) {
            if (!line.startsWith('data: ')) continue;
            const id = JSON.parse(line.slice(6))?.data?.events?.operation;
            if (id) onTerminal(id, at);
          }
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // aborted
    }
  })();
  await started;
  return () => abort.abort();
}

parentPort.on('message', async (o) => {
  const waiting = new Map();
  // Terminal events that arrive before their launcher has read its 202 (a launch run at its commit can finish first).
  const early = new Map();
  const close = await subscribe(o, (id, at) => {
    const resolve = waiting.get(id);
    if (resolve) resolve(at);
    else early.set(id, at);
  });
  const headers = { authorization: `Bearer ${o.secret}`, 'content-type': 'application/json' };
  const body = JSON.stringify({ name: 'bench', budget: 0, deployments: [{ provider: 'sandbox', config: {} }] });
  let measuring = false;
  const out = { latencies: [], accepted: [], statuses: [], failed: 0 };
  const one = async () => {
    const t0 = performance.now();
    const res = await fetch(`${o.origin}/v1/platform/distributions`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': randomUUID() },
      body,
    });
    const launched = await res.json();
    if (res.status !== 202) {
      if (measuring) out.failed++;
      return;
    }
    const t202 = performance.now();
    const id = launched.operation.id;
    const at =
      early.get(id) ??
      (await new Promise((resolve) => {
        waiting.set(id, resolve);
        setTimeout(() => resolve(Number.NaN), 30_000).unref();
      }));
    waiting.delete(id);
    early.delete(id);
    if (!measuring) return;
    if (Number.isNaN(at)) out.failed++;
    else {
      out.latencies.push(at - t0);
      out.accepted.push(t202 - t0);
      out.statuses.push(launched.operation.status);
    }
  };
  const run = async (seconds) => {
    const started = performance.now();
    const until = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (performance.now() < until) await one();
      }),
    );
    return (performance.now() - started) / 1000;
  };
  // A warm-up (JIT, prepared statements, the pool's connections), then the measurement.
  await run(o.warmupSeconds);
  parentPort.postMessage({ phase: 'measuring' });
  measuring = true;
  const seconds = await run(o.seconds);
  close();
  parentPort.postMessage({ phase: 'done', ...out, seconds });
});
