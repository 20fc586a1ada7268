import { spawn } from 'node:child_process';
import { expect, vi } from 'vitest';
import { cliRunner } from '../support/cli.ts';
import { appTest, buildTenant, emitEvent, onPostgres, type TestApp } from '../support/kit.ts';

/**
 * The CLI runs as built JavaScript, with no TypeScript loader: a command costs little more than starting Node.
 * Measured against `node -e ''` in the same test, interleaved, so a loaded machine slows both alike.
 */
vi.setConfig({ testTimeout: 180_000 });

const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
const { start } = cliRunner(() => t.origin);

/** Milliseconds from spawn to exit (exit code 0 required). */
async function timed(spawned: () => { exited: Promise<number | null>; out?: { stderr: string } }): Promise<number> {
  const began = performance.now();
  const { exited, out } = spawned();
  expect(await exited, out?.stderr).toBe(0);
  return performance.now() - began;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// A command's start-up cost is the client's, whatever the server's database: the PGlite pass measures it.
test.skipIf(onPostgres())("platform --help and platform events list --limit 1 each take at most 8x node -e ''", async ({ app }) => {
  const { org, token } = await buildTenant(app, ['events:read']);
  await emitEvent(app, org.id, 'payout.created');
  const node = () => {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    return { exited: new Promise<number | null>((r) => child.on('exit', r)) };
  };
  const runs = { node: [] as number[], help: [] as number[], list: [] as number[] };
  for (let i = 0; i < 5; i++) {
    runs.node.push(await timed(node));
    runs.help.push(await timed(() => start(['--help'])));
    runs.list.push(await timed(() => start(['events', 'list', '--limit', '1'], { PLATFORM_API_KEY: token })));
  }
  const base = median(runs.node);
  expect(median(runs.help), JSON.stringify(runs)).toBeLessThanOrEqual(8 * base);
  expect(median(runs.list), JSON.stringify(runs)).toBeLessThanOrEqual(8 * base);
});
