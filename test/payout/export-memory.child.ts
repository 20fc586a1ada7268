/**
 * The server of test/payout/export-memory.test.ts, alone in its own process (node --expose-gc, a small old space):
 * it serves the database the test seeded, streams one ledger export to itself over HTTP, and reports the memory
 * it holds after a forced GC before the request, once 10,000 rows have arrived and once all have, as one JSON line.
 * Environment: DATABASE_URL or DATA_DIR, TOKEN, PERIOD, ROWS.
 */
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';

const env = process.env;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
/** What the process holds after a full GC: the JS heap and the memory outside it (Buffers, ArrayBuffers). */
const held = () => {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external };
};

const config = loadConfig(
  { LOG_LEVEL: 'silent' },
  { host: '127.0.0.1', port: 0, databaseUrl: env.DATABASE_URL || undefined, dataDir: env.DATA_DIR ?? 'memory://', bootstrap: false },
);
const app = await buildApp(config);
await app.start();
const rows = Number(env.ROWS);
const url = `${app.urls.api_origin}/v1/platform/payouts/exports?format=csv&kind=ledger&period=${env.PERIOD}`;
// Warm-up: the first export of a page loads the code and the statement caches the measured one then reuses.
await (await fetch(`${url.replace(env.PERIOD!, '2000-01-01T00:00:00Z')}`, { headers: { authorization: `Bearer ${env.TOKEN}` } })).text();
const samples: Record<string, { heap: number; external: number }> = { before: held() };
const res = await fetch(url, { headers: { authorization: `Bearer ${env.TOKEN}` } });
if (res.status !== 200) throw new Error(`export answered ${res.status}: ${await res.text()}`);
let lines = 0;
let firstTenth = true;
for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
  for (const byte of chunk) if (byte === 10) lines++;
  if (firstTenth && lines > rows / 10) {
    firstTenth = false;
    samples.tenth = held();
  }
}
samples.all = held();
await app.stop();
process.stdout.write(`${JSON.stringify({ lines, samples })}\n`);
process.exit(0);
