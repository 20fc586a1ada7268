/**
 * graphql-ws load generator (a child process of bench/run.ts, so the
 * subscribers' CPU and memory are not the server's): opens K connections,
 * each subscribed to `events`, and records event-to-subscriber latency from
 * the append timestamp each event carries in `data.t` (epoch ms, same clock).
 *
 * Parent → child over IPC: { report: true } → { received, latencies summary }; { close: true }.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

const [origin, secret, kRaw] = process.argv.slice(2);
const K = Number(kRaw);
const wsUrl = origin!.replace(/^http/, 'ws') + '/graphql';
const now = () => performance.timeOrigin + performance.now();

let latencies = new Float64Array(1 << 20);
let count = 0;
let errors = 0;
const clients: Client[] = [];

function record(ms: number) {
  if (count === latencies.length) {
    const grown = new Float64Array(latencies.length * 2);
    grown.set(latencies);
    latencies = grown;
  }
  latencies[count++] = ms;
}

async function open(i: number): Promise<void> {
  const client = createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${secret}` },
    retryAttempts: 0,
    lazy: false,
  });
  clients[i] = client;
  client.subscribe<{ events: { data: { t?: number } } }>(
    { query: 'subscription { events { id seq data } }' },
    {
      next: (msg) => {
        const t = msg.data?.events.data.t;
        if (typeof t === 'number') record(now() - t);
      },
      error: () => errors++,
      complete: () => {},
    },
  );
  await new Promise<void>((resolve) => {
    const off = client.on('connected', () => (off(), resolve()));
    const offErr = client.on('error', () => (offErr(), errors++, resolve()));
  });
}

for (let i = 0; i < K; i += 200) {
  await Promise.all(Array.from({ length: Math.min(200, K - i) }, (_, j) => open(i + j)));
}
process.send!({ connected: K, errors });

process.on('message', async (m: { report?: boolean; reset?: boolean; close?: boolean }) => {
  if (m.reset) {
    count = 0;
    process.send!({ reset: true });
  }
  if (m.report) {
    const xs = latencies.subarray(0, count).slice().sort();
    const pct = (p: number) => (count ? xs[Math.min(count - 1, Math.floor((p / 100) * count))]! : NaN);
    process.send!({ received: count, errors, p50: pct(50), p99: pct(99), max: count ? xs[count - 1] : NaN, rssMb: process.memoryUsage.rss() / 2 ** 20 });
  }
  if (m.close) {
    await Promise.all(clients.map((c) => c.dispose()));
    process.exit(0);
  }
});
