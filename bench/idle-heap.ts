/**
 * Idle graphql-ws subscribers, heap by constructor: `node --expose-gc --import
 * tsx bench/idle-heap.ts [n=1000] [outDir]` holds n, then 2n idle subscribers
 * (bench/ws-load.ts children) on an in-process API (PGlite, or DATABASE_URL),
 * writes a heap snapshot after each and prints the per-subscriber heap and RSS
 * and the constructors that grew most between the two (per added subscriber).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { BENCH_OPERATOR, benchEnv, benchTenant } from './tenant.ts';

const here = dirname(fileURLToPath(import.meta.url));
const n = Number(process.argv[2] ?? 1000);
const outDir = process.argv[3] ?? mkdtempSync(join(os.tmpdir(), 'idle-heap-'));
const dataDir = mkdtempSync(join(os.tmpdir(), 'idle-heap-db-'));
const app = await buildApp(loadConfig(benchEnv(dataDir, process.env.DATABASE_URL ?? '')));
await app.start();
const { secret } = await benchTenant(app.urls.api_origin, BENCH_OPERATOR, ['events:read']);

const gc = (globalThis as { gc?: () => void }).gc!;
const settle = async () => {
  for (let i = 0; i < 3; i++) gc(), await new Promise((r) => setTimeout(r, 200));
};
const children: ReturnType<typeof fork>[] = [];
async function hold(k: number) {
  const child = fork(join(here, 'ws-load.ts'), [app.urls.api_origin, secret, String(k)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  await new Promise((r) => child.once('message', r));
  const want = app.stream.subscriberCount + 0;
  const until = Date.now() + 60_000;
  while (app.stream.subscriberCount < children.length * k && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  void want;
}
const measure = () => ({ heap: process.memoryUsage().heapUsed, rss: process.memoryUsage.rss() });

await settle();
const m0 = measure();
await hold(n);
await settle();
const m1 = measure();
const s1 = v8.writeHeapSnapshot(join(outDir, `idle-${n}.heapsnapshot`));
await hold(n);
await settle();
const m2 = measure();
const s2 = v8.writeHeapSnapshot(join(outDir, `idle-${2 * n}.heapsnapshot`));
const kib = (b: number) => (b / 1024).toFixed(2);
console.log(
  `subscribers ${app.stream.subscriberCount}; heap per subscriber: 0→${n} ${kib((m1.heap - m0.heap) / n)} KiB, ${n}→${2 * n} ${kib((m2.heap - m1.heap) / n)} KiB; RSS ${kib((m1.rss - m0.rss) / n)}, ${kib((m2.rss - m1.rss) / n)} KiB`,
);

/** Self size and count per (node type, name) of a snapshot. */
function byConstructor(file: string): Map<string, { size: number; count: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8'));
  const {
    node_fields: fields,
    node_types: [types],
  } = snap.snapshot.meta;
  const w = fields.length;
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f: string) => fields.indexOf(f));
  const out = new Map<string, { size: number; count: number }>();
  for (let i = 0; i < snap.nodes.length; i += w) {
    const type = types[snap.nodes[i + iType]];
    const name =
      type === 'string' || type === 'concatenated string' || type === 'sliced string'
        ? ''
        : type === 'code'
          ? ''
          : snap.strings[snap.nodes[i + iName]];
    const key = `${type} ${name}`.slice(0, 80);
    const e = out.get(key) ?? { size: 0, count: 0 };
    e.size += snap.nodes[i + iSize];
    e.count++;
    out.set(key, e);
  }
  return out;
}
const a = byConstructor(s1);
const b = byConstructor(s2);
const rows = [...b]
  .map(([k, v]) => ({ k, size: (v.size - (a.get(k)?.size ?? 0)) / n, count: (v.count - (a.get(k)?.count ?? 0)) / n }))
  .sort((x, y) => y.size - x.size);
console.log(`total self size diff per subscriber: ${kib(rows.reduce((s, r) => s + r.size, 0))} KiB`);
for (const r of rows.slice(0, Number(process.env.TOP ?? 45)))
  console.log(`${kib(r.size).padStart(7)} KiB ${r.count.toFixed(2).padStart(6)}×  ${r.k}`);
for (const c of children) c.send({ close: true });
await Promise.all(children.map((c) => new Promise((r) => c.once('exit', r))));
await app.stop();
rmSync(dataDir, { recursive: true, force: true });
console.log(`snapshots in ${outDir}`);
process.exit(0);
