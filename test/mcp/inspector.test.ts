import { spawn } from 'node:child_process';
import { expect } from 'vitest';
import { onPostgres } from '../support/database.ts';
import { appTest, buildTenant } from '../support/kit.ts';
import { connectMcp } from './helpers.ts';

/**
 * The official MCP Inspector's command line lists the tools of the running
 * server with a scoped key, as a developer would check it: on Node 22 from
 * the npm registry, as the conformance suite runs. (The standalone
 * `@modelcontextprotocol/inspector-cli` package cannot start outside the
 * inspector's own tree: it reads a package.json above it. The
 * `@modelcontextprotocol/inspector` package carries the same command line.)
 */
const test = appTest();
const INSPECTOR = ['npx', '-y', '-p', 'node@22', '-p', '@modelcontextprotocol/inspector@0.22.0', '--', 'mcp-inspector', '--cli'];

function inspector(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const child = spawn(INSPECTOR[0]!, [...INSPECTOR.slice(1), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => done({ code, out, err }));
  });
}

// The protocol does not depend on the database: the PGlite pass runs it (docs/operating/ci.md).
test.skipIf(onPostgres())('the inspector lists the tools a scoped key may use, and no other', { timeout: 240_000 }, async ({ app: t }) => {
  const scopes = ['events:read', 'webhooks:read'];
  const { token } = await buildTenant(t, scopes);
  const run = await inspector([
    `${t.origin}/mcp`,
    '--transport',
    'http',
    '--method',
    'tools/list',
    '--header',
    `Authorization: Bearer ${token}`,
  ]);
  expect(run.code, run.err + run.out).toBe(0);
  const listed = (JSON.parse(run.out) as { tools: { name: string }[] }).tools.map((x) => x.name);
  // The key's tools, as the SDK's own client lists them: the scopes' and nothing else.
  const agent = await connectMcp(t.origin, token);
  expect(listed).toEqual((await agent.listTools()).tools.map((x) => x.name));
  expect(listed).toContain('webhook_endpoints_list');
  expect(listed).not.toContain('webhook_endpoints_create');
  await agent.close();
});
