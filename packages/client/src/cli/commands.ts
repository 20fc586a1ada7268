import { Argument } from 'commander';
import { webhooks, type LedgerEntryStatus, type Operation, type PayoutStatus } from '../index.ts';
import {
  eventLine,
  registerAssertionCommands,
  registerDistributionCommands,
  registerEventCommands,
  registerToolCommands,
  registerDestinationCommands,
  registerWebhookCommands,
} from './api-commands.ts';
import { registerCompletion } from './completion.ts';
import { required, UsageError } from './credentials.ts';
import { clientEvent, streamEvents } from './event-stream.ts';
import { registerLoginCommands } from './login.ts';
import { EXIT, print, table } from './output.ts';
import { creds, operatorClient, platformClient, program, run, tokenClient } from './program.ts';

/**
 * The user-facing `platform` commands: everything that talks to a running
 * server over HTTP and graphql-ws through the client library. Registered on
 * the shared `program`; the server's own CLI registers start, migrate and
 * bootstrap first, then these (src/cli/platform.ts in the repository).
 */
export function registerUserCommands(): void {
  registerLoginCommands(program);

  // ── Tokens (dashboard user token) ────────────────────────────────────────────

  const tokens = program.command('tokens').description('manage platform tokens (dashboard user token)');

  tokens
    .command('list')
    .description('list tokens, newest first (metadata only)')
    .action(
      run(async (g) => {
        const list = await tokenClient(g).list();
        print(g, list, () =>
          table([
            ['ID', 'NAME', 'STATUS', 'PREFIX', 'SCOPES', 'LAST USED'],
            ...list.map((t) => [t.id, t.name, t.status, t.tokenPrefix, String(t.scopes.length), t.lastUsedAt ?? '-']),
          ]),
        );
      }),
    );

  tokens
    .command('create')
    .description('create a token; its secret is printed once')
    .requiredOption('--name <name>', 'a name for the token')
    .requiredOption('--scope <scope...>', 'scopes to grant (repeat or space-separate)')
    .option('--expires-at <date>', 'RFC 3339 expiry')
    .action(
      run(async (g, o: { name: string; scope: string[]; expiresAt?: string }) => {
        const out = await tokenClient(g).create({ name: o.name, scopes: o.scope.flatMap((s) => s.split(',')), expiresAt: o.expiresAt });
        print(g, out, () => `Created ${out.token.id} (${out.token.scopes.join(' ')})\nSecret (shown once): ${out.secret}`);
      }),
    );

  tokens
    .command('revoke <tokenId>')
    .description('revoke a token; later use answers 401')
    .action(
      run(async (g, id: string) => {
        const out = await tokenClient(g).revoke(id);
        print(g, out, () => `Revoked ${id}`);
      }),
    );

  tokens
    .command('rotate <tokenId>')
    .description('revoke a token and issue a replacement with the same scopes; the new secret is printed once')
    .action(
      run(async (g, id: string) => {
        const out = await tokenClient(g).rotate(id);
        print(g, out, () => `Revoked ${id}; replacement ${out.token.id}\nSecret (shown once): ${out.secret}`);
      }),
    );

  // ── Operator ──────────────────────────────────────────────────────────────

  program
    .command('kill-switch')
    .description('engage, release or show the kill switch (operator token); engaged, Surface B answers 503 developer_access_paused')
    .addArgument(new Argument('<state>', 'on, off or status').choices(['on', 'off', 'status']))
    .action(
      run(async (g, state: 'on' | 'off' | 'status') => {
        const op = operatorClient(g);
        const out = state === 'status' ? await op.killSwitch() : await op.setKillSwitch(state === 'on');
        print(g, out, () => `Kill switch ${out.engaged ? 'ENGAGED' : 'released'}${out.updatedAt ? ` (since ${out.updatedAt})` : ''}`);
      }),
    );

  const wallet = program.command('wallet').description('brand wallets (operator token)');
  wallet
    .command('top-up <brand> <amount>')
    .description(
      'credit a brand wallet (brand id, or a slug from the credentials file; amount in minor units); wakes launches waiting on funding',
    )
    .action(
      run(async (g, brand: string, amount: string) => {
        const n = Number(amount);
        if (!Number.isInteger(n) || n <= 0) throw new UsageError(`amount must be a positive integer (minor units), got '${amount}'`);
        const c = creds(g);
        const brandId = brand.startsWith('brand_') ? brand : (c.brands.find((b) => b.slug === brand)?.id ?? brand);
        const out = await operatorClient(g).topUpWallet(brandId, { amount: n });
        print(g, out, () => `Topped up ${brand} by ${n}; balance ${out.balance}`);
      }),
    );

  // ── Events ────────────────────────────────────────────────────────────────

  const events = program.command('events').description('the event feed and the live event stream');
  registerEventCommands(events);

  events
    .command('tail')
    .description('stream live events to the terminal (graphql-ws) until Ctrl-C')
    .option('--type <type...>', 'only these public event types')
    .option('--brand <brand...>', 'only events of these brands (ids or slugs; repeatable)')
    .option('--subject-type <type...>', 'only events whose subject has one of these types (repeatable)')
    .option('--subject-id <id>', 'only events about this subject')
    .option('--starting-after <seq>', 'replay the feed after this seq or evt_ id first')
    .action(
      run(async (g, o: { type?: string[]; startingAfter?: string } & StreamFilterOptions) => {
        const { origin, apiKey } = creds(g);
        const stream = streamEvents(
          {
            origin,
            apiKey: required(apiKey, 'platform token', '--api-key', 'PLATFORM_API_KEY'),
            types: o.type,
            ...streamFilter(o),
            startingAfter: o.startingAfter,
            onConnected: () =>
              !g.json && process.stderr.write(`Tailing events from ${origin}${o.type ? ` (${o.type.join(', ')})` : ''}; Ctrl-C to stop\n`),
          },
          (e) => {
            const event = clientEvent(e);
            process.stdout.write(g.json ? `${JSON.stringify(event)}\n` : `${eventLine(event)}\n`);
          },
        );
        return untilInterrupted(stream);
      }),
    );

  program
    .command('listen')
    .description('forward live events to a local URL, signed like real deliveries with a session secret')
    .requiredOption('--forward-to <url>', 'where to POST each event, e.g. http://localhost:3000/webhooks')
    .option('--events <type...>', 'only these public event types')
    .option('--brand <brand...>', 'only events of these brands (ids or slugs; repeatable)')
    .option('--subject-type <type...>', 'only events whose subject has one of these types (repeatable)')
    .option('--subject-id <id>', 'only events about this subject')
    .option('--secret <whsec>', 'sign with this secret instead of a fresh session secret')
    .option('--retries <n>', 'retry a failed forward this many times (0.5 s, 1 s, 2 s ... apart)', '2')
    .action(
      run(async (g, o: { forwardTo: string; events?: string[]; secret?: string; retries: string } & StreamFilterOptions) => {
        const target = forwardTarget(o.forwardTo);
        const retries = Number(o.retries);
        if (!Number.isInteger(retries) || retries < 0 || retries > 10)
          throw new UsageError(`--retries must be 0 to 10, got '${o.retries}'`);
        const { origin, apiKey } = creds(g);
        const secret = o.secret ?? webhooks.generateSecret();
        process.stderr.write(`Forwarding events to ${target}\nSession signing secret: ${secret}\n`);
        const stream = streamEvents(
          { origin, apiKey: required(apiKey, 'platform token', '--api-key', 'PLATFORM_API_KEY'), types: o.events, ...streamFilter(o) },
          async (e) => {
            const body = JSON.stringify(e);
            const headers = await webhooks.sign(body, secret, { id: e.id });
            const started = Date.now();
            let outcome = await forward(target, body, headers);
            let attempts = 1;
            while (!outcome.ok && attempts <= retries) {
              await new Promise((r) => setTimeout(r, 500 * 2 ** (attempts - 1)));
              outcome = await forward(target, body, headers);
              attempts++;
            }
            const line = {
              event: e.id,
              type: e.type,
              seq: e.seq,
              status: outcome.status,
              ok: outcome.ok,
              attempts,
              durationMs: Date.now() - started,
              ...(outcome.ok ? {} : { error: outcome.error }),
            };
            process.stdout.write(
              g.json
                ? `${JSON.stringify(line)}\n`
                : `${eventLine(clientEvent(e))}  -> ${outcome.ok ? outcome.status : `failed: ${outcome.error}`} (${line.durationMs} ms${attempts > 1 ? `, ${attempts} attempts` : ''})\n`,
            );
          },
        );
        return untilInterrupted(stream);
      }),
    );
  registerWebhookCommands(program);
  registerDestinationCommands(program);
  registerAssertionCommands(program);
  registerDistributionCommands(program);
  registerToolCommands(program);

  // ── Operations ────────────────────────────────────────────────────────────

  const operations = program.command('operations').description('asynchronous operations');

  operations
    .command('wait <operationId>')
    .description('poll an operation until it is terminal, showing progress; exit 0 succeeded, 5 partial/failed/canceled, 4 timed out')
    .option('--timeout-ms <ms>', 'give up after this long (the operation keeps running)', '60000')
    .option('--interval-ms <ms>', 'poll interval', '1000')
    .action(run(async (g, id: string, o: WaitFlags) => waitOperation(g, id, o)));

  // ── Payouts ───────────────────────────────────────────────────────────────

  const payouts = program.command('payouts').description('the payout ledger, runs and payouts (payouts:read / :write)');

  payouts
    .command('run')
    .description('pay the unpaid entries payable by --period-end, one payout per entity (a payout.run operation)')
    .requiredOption('--period-end <time>', 'RFC 3339; entries payable in periods ending at or before it')
    .option('--program <programId>', 'only this program (default: every program of the brand)')
    .option('--wait', 'poll the operation until terminal, printing progress; exit 0 succeeded, 5 partial/failed/canceled, 4 timed out')
    .option('--timeout-ms <ms>', 'with --wait: give up after this long (the run keeps going)', '60000')
    .option('--interval-ms <ms>', 'with --wait: poll interval', '1000')
    .action(
      run(async (g, o: WaitFlags & { periodEnd: string; program?: string; wait?: boolean }) => {
        const op = await platformClient(g).client.payouts.run({ program: o.program, periodEnd: o.periodEnd });
        if (!o.wait) {
          print(g, op, () => `${op.id} ${op.kind} ${op.status}; follow it with \`platform operations wait ${op.id}\``);
          return;
        }
        if (!g.json) process.stderr.write(`${progressLine(op)}\n`);
        return waitOperation(g, op.id, o, progressLine(op));
      }),
    );

  payouts
    .command('list')
    .description('payouts of the selected brand, newest first')
    .option('--status <status>', 'created, in_review, settled or failed')
    .option('--limit <n>', 'at most this many (1 to 100)', '20')
    .action(
      run(async (g, o: { status?: PayoutStatus; limit: string }) => {
        const page = await platformClient(g).client.payouts.list({ status: o.status, limit: Number(o.limit) });
        print(g, page.data, () =>
          page.data.length
            ? table([['ID', 'STATUS', 'AMOUNT', 'ENTITY'], ...page.data.map((p) => [p.id, p.status, String(p.amount), p.entity])])
            : 'No payouts',
        );
      }),
    );

  payouts
    .command('ledger')
    .description(
      'ledger entries of the selected brand, newest first (what each enrollment earned per period, integer minor units); ' +
        "--csv streams the whole ledger export of --period's period to stdout instead",
    )
    .option('--entity <entityId>', 'only this entity (ent_)')
    .option('--program <programId>', 'only this program (prog_)')
    .option('--period <time>', 'any RFC 3339 instant of a period: entries payable in it (required with --csv)')
    .option('--status <status>', 'unpaid, in_flight or paid')
    .option('--limit <n>', 'at most this many (1 to 100)', '20')
    .option('--csv', 'stream the ledger export (RFC 4180, stable columns) of the period instead of a table; takes no other filter')
    .action(
      run(async (g, o: LedgerFlags) => {
        if (o.csv) {
          const extra = (['entity', 'program', 'status'] as const).filter((f) => o[f] !== undefined);
          if (extra.length) throw new UsageError(`--csv exports the whole period's ledger: drop --${extra.join(', --')}`);
          if (!o.period) throw new UsageError('--csv needs --period <time> (any instant of the period to export)');
          return streamExport(g, { period: o.period, kind: 'ledger' });
        }
        const page = await platformClient(g).client.payouts.ledger({
          entity: o.entity,
          program: o.program,
          period: o.period,
          status: o.status,
          limit: Number(o.limit),
        });
        print(g, page.data, () =>
          page.data.length
            ? table([
                ['ID', 'KIND', 'STATUS', 'AMOUNT', 'ENTITY', 'PERIOD'],
                ...page.data.map((e) => [e.id, e.kind, e.status, String(e.amount), e.entity, e.periodStart.slice(0, 10)]),
              ])
            : 'No ledger entries',
        );
      }),
    );

  payouts
    .command('export')
    .description('CSV of the payouts (or the ledger) of the period containing --period, streamed to stdout')
    .requiredOption('--period <time>', 'any RFC 3339 instant of the period')
    .option('--kind <kind>', 'payouts or ledger', 'payouts')
    .action(run(async (g, o: { period: string; kind: 'payouts' | 'ledger' }) => streamExport(g, o)));
  registerCompletion(program);
}

interface LedgerFlags {
  entity?: string;
  program?: string;
  period?: string;
  status?: LedgerEntryStatus;
  limit: string;
  csv?: boolean;
}

/** Writes an export to stdout as it arrives (constant memory), waiting for stdout to drain when it is slow. */
async function streamExport(g: Parameters<typeof platformClient>[0], params: { period: string; kind: 'payouts' | 'ledger' }) {
  const body = await platformClient(g).client.payouts.exportStream(params);
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    if (!process.stdout.write(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  }
}

interface WaitFlags {
  timeoutMs: string;
  intervalMs: string;
}

/** Polls an operation until terminal, progress lines on stderr (each once); the exit code says how it ended. */
async function waitOperation(g: Parameters<typeof platformClient>[0], id: string, o: WaitFlags, shown = ''): Promise<number> {
  const { client } = platformClient(g);
  let lastLine = shown;
  const op = await client.operations.wait(id, {
    timeoutMs: Number(o.timeoutMs),
    intervalMs: Number(o.intervalMs),
    onPoll: (p) => {
      const line = progressLine(p);
      if (line !== lastLine && !g.json) process.stderr.write(`${line}\n`);
      lastLine = line;
    },
  });
  print(g, op, () => `${op.id} ${op.status}${op.error ? `: ${JSON.stringify(op.error)}` : ''}`);
  return op.status === 'succeeded' ? EXIT.ok : EXIT.operationNotSucceeded;
}

/** The brand and subject filters of `events tail` and `listen` (src/domain/event/filter.ts). */
interface StreamFilterOptions {
  brand?: string[];
  subjectType?: string[];
  subjectId?: string;
}
const streamFilter = (o: StreamFilterOptions) => ({ brands: o.brand, subjectTypes: o.subjectType, subjectId: o.subjectId });

/** `--forward-to` must be an absolute http(s) URL: a usage error (exit 2) before anything connects. */
function forwardTarget(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`--forward-to must be an absolute URL such as http://localhost:3000/webhooks, got '${raw}'`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`--forward-to must use http or https, got '${u.protocol}'`);
  return u.href;
}

/** One forward; a failure says why: the status and the start of the body, or the network error. */
async function forward(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; ok: boolean; error?: string }> {
  try {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'platform-cli-listen', ...headers },
      body,
      signal: AbortSignal.timeout(15_000),
    });
    if (r.ok) return { status: r.status, ok: true };
    const excerpt = (await r.text().catch(() => '')).slice(0, 200).replace(/\s+/g, ' ').trim();
    return { status: r.status, ok: false, error: `HTTP ${r.status}${excerpt ? `: ${excerpt}` : ''}` };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const reason = e.name === 'TimeoutError' ? 'no response within 15 s' : (e.cause?.code ?? e.cause?.message ?? e.message);
    return { status: 0, ok: false, error: reason };
  }
}

function progressLine(op: Operation): string {
  const progress =
    op.progress && Object.keys(op.progress).length
      ? ` ${Object.entries(op.progress)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(' ')}`
      : '';
  return `${op.id} ${op.kind} ${op.status}${op.waitingReason ? ` (${op.waitingReason})` : ''} attempt ${op.attempts}/${op.maxAttempts}${progress}`;
}

/** Streams until SIGINT/SIGTERM (exit 0) or a stream error (thrown, mapped to an exit code). */
async function untilInterrupted(stream: { done: Promise<void>; close(): void }): Promise<number> {
  const stop = () => stream.close();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await stream.done;
    return EXIT.ok;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
