/**
 * graphql-ws load generator (a child process of bench/run.ts, so the
 * subscribers' CPU and memory are not the server's): opens K connections
 * speaking graphql-transport-ws on bare `ws`, each subscribed to `events`,
 * and records event-to-subscriber latency from the append timestamp each
 * event carries in `data.t` (epoch ms, same clock). It reads `t` from the
 * frame's text instead of parsing each frame, so that one load process keeps
 * up with tens of thousands of messages per second.
 *
 * Parent → child over IPC: { reset: true } → { reset: true } (latencies
 * cleared); { report: true } → { received, errors, closes, p50, p99, max,
 * rssMb }; { close: true }.
 */
import WebSocket from 'ws';

const [origin, secret, kRaw] = process.argv.slice(2);
const K = Number(kRaw);
const wsUrl = `${origin!.replace(/^http/, 'ws')}/graphql`;
const now = () => performance.timeOrigin + performance.now();
const SUBSCRIBE = JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { events { id seq data } }' } });
const T = /"t":([0-9.e+]+)/;

let latencies = new Float64Array(1 << 20);
let count = 0;
let errors = 0;
let closes = 0;
const sockets: WebSocket[] = [];

function record(ms: number) {
  if (count === latencies.length) {
    const grown = new Float64Array(latencies.length * 2);
    grown.set(latencies);
    latencies = grown;
  }
  latencies[count++] = ms;
}

function open(): Promise<void> {
  return new Promise((resolve) => {
    const ws = new WebSocket(wsUrl, 'graphql-transport-ws');
    sockets.push(ws);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${secret}` } })));
    ws.on('message', (data: Buffer) => {
      const text = data.toString();
      if (text.startsWith('{"id":"1","type":"next"')) {
        const m = T.exec(text);
        if (m) record(now() - Number(m[1]));
      } else if (text.includes('"connection_ack"')) {
        ws.send(SUBSCRIBE);
        resolve();
      } else if (text.includes('"type":"error"')) errors++;
    });
    ws.on('error', () => (errors++, resolve()));
    ws.on('close', () => (closes++, resolve()));
  });
}

for (let i = 0; i < K; i += 200) await Promise.all(Array.from({ length: Math.min(200, K - i) }, open));
process.send!({ connected: K, errors });

process.on('message', async (m: { report?: boolean; reset?: boolean; close?: boolean }) => {
  if (m.reset) {
    count = 0;
    errors = 0;
    process.send!({ reset: true });
  }
  if (m.report) {
    const xs = latencies.subarray(0, count).slice().sort();
    const pct = (p: number) => (count ? xs[Math.min(count - 1, Math.floor((p / 100) * count))]! : NaN);
    process.send!({
      received: count,
      errors,
      closes,
      p50: pct(50),
      p99: pct(99),
      max: count ? xs[count - 1] : NaN,
      rssMb: process.memoryUsage.rss() / 2 ** 20,
    });
  }
  if (m.close) {
    await Promise.all(
      sockets.map((ws) => new Promise((r) => (ws.readyState === ws.CLOSED ? r(null) : (ws.once('close', r), ws.close(1000))))),
    );
    process.exit(0);
  }
});
