import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test } from 'vitest';
import { waitTool } from '../../src/mcp/operation-wait.ts';
import { TOOLS } from '../../src/mcp/tools.ts';

/**
 * docs/mcp.md's tool list is generated from the registry (src/mcp/tools.ts):
 * this test fails when it is stale; `DOCS_UPDATE=1` rewrites it.
 */
const PAGE = resolve(import.meta.dirname, '../../docs/mcp.md');
const START = '<!-- mcp-tools:start (generated from the registry by test/mcp/docs.test.ts; DOCS_UPDATE=1 rewrites it) -->';
const END = '<!-- mcp-tools:end -->';

function table(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const rows = TOOLS.map(
    (t) =>
      `| \`${t.name}\` | \`${[t.action.scope, ...(t.action.alsoNeeds ?? [])].join('`, `')}\` | ${t.mutation ? 'yes' : ''} | ${cell(t.action.summary)} |`,
  );
  rows.push(`| \`${waitTool.name}\` | \`${waitTool.scope}\` | | ${cell(waitTool.description.split('. ')[0]!)} |`);
  return ['| Tool | Scopes | Changes | What it does |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

test("the tool list in docs/mcp.md is the registry's", () => {
  const page = readFileSync(PAGE, 'utf8');
  const at = page.indexOf(START);
  const end = page.indexOf(END);
  expect(at, 'docs/mcp.md has the generated section markers').toBeGreaterThan(-1);
  const fresh = `${page.slice(0, at + START.length)}\n${table()}\n${page.slice(end)}`;
  if (process.env.DOCS_UPDATE === '1') writeFileSync(PAGE, fresh);
  else expect(page, 'run DOCS_UPDATE=1 npx vitest run test/mcp/docs.test.ts').toBe(fresh);
});
