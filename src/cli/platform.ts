import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { creds, print, program, registerUserCommands, required, run, runProgram } from 'platform-api/cli';

/**
 * `platform`: the operator's and developer's command line. The user-facing
 * commands (API over HTTP through the client library) come from the client
 * package (packages/client, its `platform` bin offers only those); this
 * server CLI adds start, migrate and bootstrap, the only commands that load
 * server code.
 *
 * It runs as built JavaScript (dist/cli/platform.js, built with the client by
 * scripts/build-client.mjs on npm install; bin/platform.mjs loads it), so a
 * command pays for no TypeScript loader. The server commands load the built
 * server (dist/server, scripts/build-server.mjs) when they run.
 */
program.description('Run and operate the platform API, and talk to it from the terminal');

interface ServerCommands {
  start(): Promise<void>;
  migrate(): Promise<{ database: string; applied: string[] }>;
  bootstrap(): Promise<{ file: string; created: boolean }>;
  reencryptCredentials(): Promise<{ key: string; reencrypted: number; current: number; undecryptable: string[] }>;
}

/** The server's own code, built (scripts/build-server.mjs, rebuilt first if a source changed): `../../scripts/` from src/cli/ and dist/cli/ alike. */
async function serverCommands(): Promise<ServerCommands> {
  const { serverEntry } = await import('../../scripts/build-server.mjs');
  process.setSourceMapsEnabled(true);
  return (await import(await serverEntry('server-commands'))) as ServerCommands;
}

// ── Server ────────────────────────────────────────────────────────────────

program
  .command('start')
  .description('start the server (same as npm start: migrate, bootstrap on an empty embedded database, listen)')
  .addHelpText(
    'after',
    [
      '',
      'Roles (env PLATFORM_ROLE, PostgreSQL only for api and worker; see docs/operating/several-machines.md):',
      '  all      serve every route and run the background workers (default)',
      '  api      serve HTTP, GraphQL and live streams; no background workers',
      '  worker   webhook delivery, operations, maintenance; only /healthz and /readyz listen on HOST:PORT',
      '',
      'Example: DATABASE_URL=postgres://... PLATFORM_ROLE=worker PORT=4100 platform start',
    ].join('\n'),
  )
  .action(async () => {
    await (await serverCommands()).start();
  });

program
  .command('migrate')
  .description('apply pending database migrations (DATABASE_URL, or the embedded PGlite in DATA_DIR)')
  .action(
    run(async (g) => {
      const out = await (await serverCommands()).migrate();
      print(g, out, () =>
        out.applied.length
          ? `Applied to ${out.database}:\n${out.applied.map((m) => `  ${m}`).join('\n')}`
          : `${out.database} is up to date`,
      );
    }),
  );

program
  .command('bootstrap')
  .description('migrate, then create the development organization and credentials file on an empty database')
  .action(
    run(async (g) => {
      const out = await (await serverCommands()).bootstrap();
      print(g, out, () =>
        out.created
          ? `Bootstrapped; credentials written to ${out.file} (mode 0600)`
          : `The database already holds an organization; nothing done (credentials: ${out.file})`,
      );
    }),
  );

program
  .command('reencrypt-credentials')
  .description("re-encrypt every stored credential (event destinations' broker URLs) under the first key of ENCRYPTION_KEYS")
  .action(
    run(async (g) => {
      const out = await (await serverCommands()).reencryptCredentials();
      print(g, out, () =>
        [
          `Re-encrypted ${out.reencrypted} credential(s) under key ${out.key}; ${out.current} already were`,
          ...(out.undecryptable.length
            ? [`No configured key decrypts: ${out.undecryptable.join(', ')} (list the key they were encrypted with in ENCRYPTION_KEYS)`]
            : []),
        ].join('\n'),
      );
      return out.undecryptable.length ? 1 : 0;
    }),
  );

// ── Agents ────────────────────────────────────────────────────────────────

program
  .command('mcp')
  .description("serve the API's MCP tools on stdin/stdout for a local agent, with the profile's key (docs/mcp.md)")
  .option('--read-only', 'hide every tool that changes something')
  .action(
    run(async (g, opts: { readOnly?: boolean }) => {
      const c = creds(g);
      await relayMcp(c.origin, required(c.apiKey, 'platform token', '--api-key', 'PLATFORM_API_KEY'), opts.readOnly ?? false);
      return new Promise<never>(() => {}); // until stdin closes (the relay exits)
    }),
  );

/**
 * `platform mcp`: the SDK's stdio server transport relayed, message for
 * message, to the server's `/mcp` over its Streamable HTTP client transport,
 * so a local agent gets exactly the remote tools (same key, same scopes,
 * same sessions) and no tool runs here. The read-only flag is `/mcp`'s
 * header. A message the server cannot be reached for is answered with a
 * JSON-RPC error naming why, and the relay ends when the agent closes stdin.
 */
async function relayMcp(origin: string, apiKey: string, readOnly: boolean): Promise<void> {
  // Loaded here, not at the top: every other command starts without the SDK.
  const [{ StreamableHTTPClientTransport }, { StdioServerTransport }, { isJSONRPCRequest, isJSONRPCResultResponse }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
  if (readOnly) headers['mcp-read-only'] = '1';
  const remote = new StreamableHTTPClientTransport(new URL('/mcp', origin), { requestInit: { headers } });
  const local = new StdioServerTransport();
  const initializing = new Set<string | number>();
  local.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message) && message.method === 'initialize') initializing.add(message.id);
    remote.send(message).catch((err: Error) => {
      process.stderr.write(`platform mcp: ${err.message}\n`);
      if (isJSONRPCRequest(message))
        void local.send({ jsonrpc: '2.0', id: message.id, error: { code: -32000, message: `platform mcp: ${err.message}` } });
    });
  };
  remote.onmessage = (message: JSONRPCMessage) => {
    // The negotiated revision goes on every later request, as the SDK's own client sets it.
    if (isJSONRPCResultResponse(message) && initializing.delete(message.id))
      remote.setProtocolVersion(String(message.result.protocolVersion));
    void local.send(message);
  };
  remote.onerror = (err) => process.stderr.write(`platform mcp: ${err.message}\n`);
  // The agent closing stdin ends the session on the server too.
  process.stdin.once('end', () => {
    void remote
      .terminateSession()
      .catch(() => {})
      .finally(() => process.exit(0));
  });
  await remote.start();
  await local.start();
}

registerUserCommands();
await runProgram(process.argv);
