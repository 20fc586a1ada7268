import { execFile, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERMINAL_OPERATION_STATUSES, type OperationStatus as ClientOperationStatus } from '../../packages/client/src/index.ts';
import { TERMINAL_STATUSES, type OperationStatus as ServerOperationStatus } from '../../src/domain/operation/operation.ts';
import { onPostgres } from '../support/database.ts';

/**
 * The client package (packages/client) as a user gets it: built by tsc,
 * packed by npm, installed from the tarball into an empty project, then used
 * from plain Node (ESM import and require), type-checked by a consumer with a
 * standard NodeNext strict tsconfig, and its `platform` bin run through npx,
 * with no tsx and no server dependency anywhere in that project.
 *
 * No database: it runs once, in the PGlite pass (skipped under
 * TEST_DATABASE_URL), and is skipped, saying so, where npm is not on PATH.
 */
const root = resolve(import.meta.dirname, '../..');
const pkgDir = join(root, 'packages/client');
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const exec = promisify(execFile);
const npmAvailable = spawnSync('npm', ['--version'], { stdio: 'ignore' }).status === 0;
if (!npmAvailable) console.warn('client-package.test.ts: npm is not on PATH; the pack-and-install test is skipped');

const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const clientPkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));

/** npm's own variables from a surrounding `npm test` point at this repository; the consumer must not inherit them. */
const npmEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^npm_(package_|lifecycle_|config_local_prefix|config_prefix$)/i.test(k)),
  );
const run = (cmd: string, args: string[], cwd: string) =>
  exec(cmd, args, { cwd, env: npmEnv(), maxBuffer: 16 * 1024 * 1024, timeout: 90_000 });

describe.skipIf(onPostgres())('the client package, source side (DB-independent: PGlite pass only)', () => {
  it("has the project's version and the same ranges for the dependencies it shares with the server", () => {
    expect(clientPkg.version).toBe(rootPkg.version);
    for (const [name, range] of Object.entries(clientPkg.dependencies as Record<string, string>)) {
      expect(rootPkg.dependencies[name], `${name}: the repository runs the package from its sources with the root's copy`).toBe(range);
    }
  });

  it("its one copy of a server list agrees with the server's: operation statuses and which are terminal", () => {
    type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
    const sameStatuses: Same<ClientOperationStatus, ServerOperationStatus> = true; // a compile error when they drift
    expect(sameStatuses).toBe(true);
    expect([...TERMINAL_OPERATION_STATUSES]).toEqual([...TERMINAL_STATUSES]);
  });

  it('declares no install scripts and ships only dist and the README', () => {
    expect(Object.keys(clientPkg.scripts ?? {}).filter((s) => /^(pre|post)?install$|^prepare$/.test(s))).toEqual([]);
    expect(clientPkg.files).toEqual(['dist', 'README.md']);
  });
});

describe.skipIf(onPostgres() || !npmAvailable)('the client package, packed and installed into an empty project', () => {
  let tmp: string;
  let consumer: string;
  let packed: string[];

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'platform-client-pkg-'));
    consumer = join(tmp, 'consumer');
    mkdirSync(consumer);
    // Built and packed from a copy: the repository's own packages/client/dist stays whole for the CLI tests running beside.
    const copy = join(tmp, 'client');
    for (const entry of ['package.json', 'README.md', 'tsconfig.json', 'src'])
      cpSync(join(pkgDir, entry), join(copy, entry), { recursive: true, dereference: true });
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
    await run(process.execPath, [tsc, '-p', copy], root); // the package's `npm run build`
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', tmp], copy);
    const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    packed = info!.files.map((f) => f.path);
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(tmp, info!.filename)], consumer);
  }, 180_000);

  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('the tarball holds the built JavaScript, declarations, README and package.json only', () => {
    expect(packed).toContain('dist/index.js');
    expect(packed).toContain('dist/index.d.ts');
    expect(packed).toContain('dist/cli/main.js');
    expect(packed).toContain('README.md');
    expect(packed.filter((p) => !p.startsWith('dist/') && p !== 'README.md' && p !== 'package.json')).toEqual([]);
    expect(packed.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);
  });

  it('the built code imports only node builtins, its own files and its declared dependencies', () => {
    const allowed = new Set([...Object.keys(clientPkg.dependencies), ...builtinModules]);
    const dist = join(tmp, 'client', 'dist');
    const bare = new Set<string>();
    for (const file of readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'))) {
      for (const m of readFileSync(join(dist, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*["']([^"'.][^"']*)["']/g)) {
        const spec = m[1]!.replace(/^node:/, '');
        bare.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
      }
    }
    expect([...bare].filter((s) => !allowed.has(s))).toEqual([]);
  });

  it('installs without tsx or any server dependency', () => {
    const installed = readdirSync(join(consumer, 'node_modules'));
    for (const server of ['tsx', 'koa', 'prisma', '@prisma', '@electric-sql', 'pg', 'graphql-yoga', 'typescript']) {
      expect(installed, server).not.toContain(server);
    }
    expect(existsSync(join(consumer, 'node_modules/@platform-api/client/dist/index.js'))).toBe(true);
  });

  it('imports from plain Node (ESM and require) and works: sign, verify, construct a client', async () => {
    writeFileSync(
      join(consumer, 'esm.mjs'),
      `import { PlatformClient, PlatformError, webhooks } from '@platform-api/client';
import { registerUserCommands } from '@platform-api/client/cli';
const secret = webhooks.generateSecret();
const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'assertion.created', data: { previous_status: 'x' } });
const event = await webhooks.verify(body, await webhooks.sign(body, secret, { id: 'msg_1' }), secret);
let refused;
try { await webhooks.verify(JSON.parse(body), {}, secret); } catch (e) { refused = e instanceof PlatformError && e.code; }
const client = new PlatformClient({ apiKey: 'sk_x_live_y', origin: 'http://127.0.0.1:1' });
console.log(JSON.stringify({ data: event.data, refused, endpoints: typeof client.webhookEndpoints.list, cli: typeof registerUserCommands }));
`,
    );
    writeFileSync(
      join(consumer, 'cjs.cjs'),
      `const { PlatformClient, webhooks } = require('@platform-api/client');
console.log(JSON.stringify({ client: typeof PlatformClient, verify: typeof webhooks.verify }));
`,
    );
    const esm = await run(process.execPath, ['esm.mjs'], consumer);
    expect(JSON.parse(esm.stdout)).toEqual({
      data: { previousStatus: 'x' },
      refused: 'webhook_payload_invalid',
      endpoints: 'function',
      cli: 'function',
    });
    const cjs = await run(process.execPath, ['cjs.cjs'], consumer); // require(esm): Node >= 20.19, as engines says
    expect(JSON.parse(cjs.stdout)).toEqual({ client: 'function', verify: 'function' });
  });

  it('type-checks a consumer with a standard strict NodeNext tsconfig (declarations checked too)', async () => {
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: [],
        },
        include: ['consumer.ts'],
      }),
    );
    writeFileSync(
      join(consumer, 'consumer.ts'),
      `import { PlatformClient, PlatformError, webhooks, type PlatformEvent, type WebhookEndpoint } from '@platform-api/client';

const platform = new PlatformClient({ apiKey: 'sk_x_live_y', origin: 'http://127.0.0.1:4000', maxRetries: 1 });
export async function created(url: string): Promise<WebhookEndpoint> {
  return platform.webhookEndpoints.create({ url, enabledEvents: ['assertion.created'] });
}
export async function received(raw: string, headers: Record<string, string>, secret: string): Promise<PlatformEvent | string> {
  try {
    return await webhooks.verify(raw, headers, secret);
  } catch (e) {
    if (e instanceof PlatformError) return e.code;
    throw e;
  }
}
// @ts-expect-error the declarations are real: an unknown option is a type error
new PlatformClient({ apiKey: 'k', noSuchOption: true });
`,
    );
    const result = await run(process.execPath, [tsc, '-p', consumer], consumer).catch((e: { stdout: string }) => e);
    expect(result.stdout).toBe('');
  });

  it('npx platform --help runs the bin without tsx: the user-facing commands, not the server ones', async () => {
    const help = await run('npx', ['--no', '--', 'platform', '--help'], consumer);
    expect(help.stdout).toMatch(/^Usage: platform /);
    for (const cmd of ['tokens', 'webhooks', 'events', 'listen', 'operations', 'completion'])
      expect(help.stdout).toMatch(new RegExp(`^  ${cmd}\\b`, 'm'));
    for (const cmd of ['start', 'migrate', 'bootstrap']) expect(help.stdout).not.toMatch(new RegExp(`^  ${cmd}\\b`, 'm'));
    const version = await run('npx', ['--no', '--', 'platform', '--version'], consumer);
    expect(version.stdout.trim()).toBe(rootPkg.version);
  });

  it("the project's own exports re-export the package: import from 'platform-api' gives the same names", async () => {
    const names = async (cwd: string, spec: string) =>
      (
        await run(
          process.execPath,
          ['--input-type=module', '-e', `console.log(Object.keys(await import('${spec}')).sort().join(','))`],
          cwd,
        )
      ).stdout;
    const [viaProject, viaPackage] = await Promise.all([names(root, 'platform-api'), names(consumer, '@platform-api/client')]);
    expect(viaProject).toBe(viaPackage);
    expect(viaProject).toContain('PlatformClient');
  });
});
