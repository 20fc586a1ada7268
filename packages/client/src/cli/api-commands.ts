import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import {
  ScopeClient,
  webhooks,
  type AssertionSubject,
  type Distribution,
  type EventDestination,
  type EventType,
  type PlatformEvent,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '../index.ts';
import { required, UsageError } from './credentials.ts';
import { EXIT, print, table } from './output.ts';
import { creds, operatorClient, platformClient, run } from './program.ts';

/**
 * The API's resources from the terminal, one command per route (Stripe's and
 * Svix's CLIs as the bar): webhook endpoints and their deliveries, the event
 * feed, test events, assertions and distributions, and `verify` for a saved
 * delivery. Every command prints a human rendering, or the client library's
 * camelCase object with `--json`.
 */

/** `--limit` as a page size of 1 to 100. */
function limitOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new UsageError(`--limit must be an integer from 1 to 100, got '${raw}'`);
  return n;
}

/** A JSON object option (`--data '{"a":1}'`). */
function jsonObject(raw: string | undefined, flag: string): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw new UsageError(`${flag} must be a JSON object, e.g. '{"key":"value"}'`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new UsageError(`${flag} must be a JSON object, not ${JSON.stringify(v)}`);
  return v as Record<string, unknown>;
}

/** `--entity ent_...`, or `--external-user-id` with `--issuer`. */
function subjectOf(o: { entity?: string; externalUserId?: string; issuer?: string }): AssertionSubject {
  if (o.entity && !o.externalUserId && !o.issuer) return { entity: o.entity };
  if (!o.entity && o.externalUserId && o.issuer) return { externalUserId: o.externalUserId, issuer: o.issuer };
  throw new UsageError('name the subject with --entity ent_..., or with both --external-user-id and --issuer');
}

const splitTypes = (v: string[] | undefined) => v?.flatMap((s) => s.split(',')).filter(Boolean);

const endpointLine = (e: WebhookEndpoint) =>
  `${e.id}  ${e.status}  ${e.url}  ${e.enabledEvents.length ? e.enabledEvents.join(',') : '(all events)'}${e.description ? `  ${e.description}` : ''}`;

export const eventLine = (e: PlatformEvent) =>
  `#${e.seq}  ${e.createdAt}  ${e.type.padEnd(24)}  ${e.id}  ${e.subject.type}/${e.subject.id}  ${JSON.stringify(e.data)}`;

const deliveryRows = (list: WebhookDelivery[]) =>
  table([
    ['ID', 'EVENT', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST', 'NEXT ATTEMPT'],
    ...list.map((d) => [
      d.id,
      d.eventId,
      d.eventType ?? '-',
      d.status,
      String(d.attempts),
      d.lastStatusCode ? String(d.lastStatusCode) : (d.lastError ?? '-'),
      d.nextAttemptAt ?? '-',
    ]),
  ]);

export function registerWebhookCommands(program: Command): void {
  const hooks = program.command('webhooks').description('webhook endpoints and their deliveries (webhooks:read / webhooks:write)');

  hooks
    .command('create')
    .description('create an endpoint; its signing secret is printed once')
    .requiredOption('--url <url>', 'https URL (plain http only for localhost)')
    .option('--events <type...>', 'public event types to receive (default: all)')
    .option('--description <text>', 'a note for humans')
    .action(
      run(async (g, o: { url: string; events?: string[]; description?: string }) => {
        const e = await platformClient(g).client.webhookEndpoints.create({
          url: o.url,
          enabledEvents: splitTypes(o.events),
          description: o.description,
        });
        print(g, e, () => `Created ${endpointLine(e)}\nSigning secret (shown once): ${e.secret}`);
      }),
    );

  hooks
    .command('list')
    .description('list endpoints, newest first')
    .option('--limit <n>', 'at most this many (1 to 100)', '20')
    .action(
      run(async (g, o: { limit: string }) => {
        const page = await platformClient(g).client.webhookEndpoints.list({ limit: limitOf(o.limit) });
        print(g, page.data, () => (page.data.length ? page.data.map(endpointLine).join('\n') : 'No webhook endpoints'));
      }),
    );

  hooks
    .command('get <endpointId>')
    .description('show one endpoint (without its secret)')
    .action(
      run(async (g, id: string) => {
        const e = await platformClient(g).client.webhookEndpoints.retrieve(id);
        print(g, e, () => endpointLine(e));
      }),
    );

  hooks
    .command('update <endpointId>')
    .description('change an endpoint; omitted options are left alone')
    .option('--url <url>', 'new URL')
    .option('--events <type...>', 'new event types (pass "" for all events)')
    .option('--description <text>', 'new description')
    .option('--enable', 'resume deliveries')
    .option('--disable', 'stop deliveries')
    .action(
      run(async (g, id: string, o: { url?: string; events?: string[]; description?: string; enable?: boolean; disable?: boolean }) => {
        if (o.enable && o.disable) throw new UsageError('pass --enable or --disable, not both');
        const params = {
          ...(o.url !== undefined ? { url: o.url } : {}),
          ...(o.events !== undefined ? { enabledEvents: splitTypes(o.events) } : {}),
          ...(o.description !== undefined ? { description: o.description } : {}),
          ...(o.enable ? { status: 'enabled' as const } : o.disable ? { status: 'disabled' as const } : {}),
        };
        if (!Object.keys(params).length)
          throw new UsageError('nothing to change: pass --url, --events, --description, --enable or --disable');
        const e = await platformClient(g).client.webhookEndpoints.update(id, params);
        print(g, e, () => `Updated ${endpointLine(e)}`);
      }),
    );

  hooks
    .command('rotate <endpointId>')
    .description('install a fresh signing secret (printed once); the previous one keeps signing for 24 h')
    .action(
      run(async (g, id: string) => {
        const e = await platformClient(g).client.webhookEndpoints.rotateSecret(id);
        print(g, e, () => `Rotated ${e.id}\nNew signing secret (shown once): ${e.secret}`);
      }),
    );

  hooks
    .command('delete <endpointId>')
    .description('delete an endpoint and its secrets')
    .action(
      run(async (g, id: string) => {
        const out = await platformClient(g).client.webhookEndpoints.del(id);
        print(g, out, () => `Deleted ${out.id}`);
      }),
    );

  hooks
    .command('deliveries <endpointId>')
    .description("an endpoint's deliveries with their last attempt, newest first")
    .option('--limit <n>', 'at most this many (1 to 100)', '20')
    .action(
      run(async (g, id: string, o: { limit: string }) => {
        const page = await platformClient(g).client.webhookEndpoints.deliveries(id, { limit: limitOf(o.limit) });
        print(g, page.data, () => (page.data.length ? deliveryRows(page.data) : 'No deliveries'));
      }),
    );

  hooks
    .command('resend <endpointId> <deliveryId>')
    .description('re-queue a failing or exhausted delivery for an immediate attempt')
    .action(
      run(async (g, id: string, deliveryId: string) => {
        const d = await platformClient(g).client.webhookEndpoints.retryDelivery(id, deliveryId);
        print(g, d, () => `Re-queued ${d.id} (event ${d.eventId}); next attempt ${d.nextAttemptAt ?? 'now'}`);
      }),
    );
}

const destinationLine = (d: EventDestination) => {
  const where = d.exchange !== null ? `exchange ${d.exchange} key ${d.routingKey}` : (d.subject ?? d.stream ?? '');
  const events = d.enabledEvents.length ? d.enabledEvents.join(',') : '(all events)';
  return `${d.id}  ${d.type}  ${d.status}  ${d.url}  ${where}  ${events}${d.description ? `  ${d.description}` : ''}`;
};

/** The options `destinations create` and `update` share: where a destination publishes. */
const destinationOptions = (c: Command) =>
  c
    .option('--exchange <name>', 'rabbitmq: the exchange (it must exist)')
    .option('--routing-key <template>', 'rabbitmq: routing-key template (default {type})')
    .option('--subject <template>', 'nats: subject template, e.g. events.{type}')
    .option('--stream <template>', 'redis: stream key template, e.g. events')
    .option('--max-len <n>', 'redis: trim the stream to about n entries')
    .option('--ca-certificate <file>', "a PEM file to verify the broker's certificate with")
    .option('--events <type...>', 'public event types to receive (default: all)')
    .option('--description <text>', 'a note for humans');

interface DestinationOptions {
  url?: string;
  exchange?: string;
  routingKey?: string;
  subject?: string;
  stream?: string;
  maxLen?: string;
  caCertificate?: string;
  events?: string[];
  description?: string;
}

/** The params the options give; an option not given is left out. */
function destinationParams(o: DestinationOptions) {
  const maxLen = o.maxLen === undefined ? undefined : Number(o.maxLen);
  if (maxLen !== undefined && !Number.isInteger(maxLen)) throw new UsageError(`--max-len must be an integer, got '${o.maxLen}'`);
  const entries = {
    url: o.url,
    exchange: o.exchange,
    routingKey: o.routingKey,
    subject: o.subject,
    stream: o.stream,
    maxLen,
    caCertificate: o.caCertificate === undefined ? undefined : readFileSync(o.caCertificate, 'utf8'),
    enabledEvents: splitTypes(o.events),
    description: o.description,
  };
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
}

export function registerDestinationCommands(program: Command): void {
  const dest = program
    .command('destinations')
    .description('event destinations on RabbitMQ, NATS JetStream or Redis Streams (webhooks:read / webhooks:write)');

  destinationOptions(
    dest
      .command('create')
      .description('create a destination; its signing secret is printed once')
      .requiredOption('--type <type>', 'rabbitmq, nats or redis')
      .requiredOption('--url <url>', 'amqps://, tls:// or rediss:// (plain amqp://, nats://, redis:// only for localhost)'),
  ).action(
    run(async (g, o: DestinationOptions & { type: EventDestination['type']; url: string }) => {
      const d = await platformClient(g).client.eventDestinations.create({ ...destinationParams(o), type: o.type, url: o.url });
      print(g, d, () => `Created ${destinationLine(d)}\nSigning secret (shown once): ${d.secret}`);
    }),
  );

  dest
    .command('list')
    .description('list destinations, newest first')
    .option('--limit <n>', 'at most this many (1 to 100)', '20')
    .action(
      run(async (g, o: { limit: string }) => {
        const page = await platformClient(g).client.eventDestinations.list({ limit: limitOf(o.limit) });
        print(g, page.data, () => (page.data.length ? page.data.map(destinationLine).join('\n') : 'No event destinations'));
      }),
    );

  dest
    .command('retrieve <destinationId>')
    .description('show one destination (its URL masked, without its secret)')
    .action(
      run(async (g, id: string) => {
        const d = await platformClient(g).client.eventDestinations.retrieve(id);
        print(g, d, () => destinationLine(d));
      }),
    );

  destinationOptions(
    dest
      .command('update <destinationId>')
      .description('change a destination; omitted options are left alone')
      .option('--url <url>', 'new broker URL')
      .option('--enable', 'resume deliveries')
      .option('--disable', 'stop deliveries'),
  ).action(
    run(async (g, id: string, o: DestinationOptions & { enable?: boolean; disable?: boolean }) => {
      if (o.enable && o.disable) throw new UsageError('pass --enable or --disable, not both');
      const params = {
        ...destinationParams(o),
        ...(o.enable ? { status: 'enabled' as const } : o.disable ? { status: 'disabled' as const } : {}),
      };
      if (!Object.keys(params).length) throw new UsageError('nothing to change: pass an option (see --help)');
      const d = await platformClient(g).client.eventDestinations.update(id, params);
      print(g, d, () => `Updated ${destinationLine(d)}`);
    }),
  );

  dest
    .command('rotate-secret <destinationId>')
    .description('install a fresh signing secret (printed once); the previous one keeps signing for 24 h')
    .action(
      run(async (g, id: string) => {
        const d = await platformClient(g).client.eventDestinations.rotateSecret(id);
        print(g, d, () => `Rotated ${d.id}\nNew signing secret (shown once): ${d.secret}`);
      }),
    );

  dest
    .command('delete <destinationId>')
    .description('delete a destination, its credentials and its secrets')
    .action(
      run(async (g, id: string) => {
        const out = await platformClient(g).client.eventDestinations.del(id);
        print(g, out, () => `Deleted ${out.id}`);
      }),
    );

  dest
    .command('replay <destinationId>')
    .description('re-send a seq range of events (an operation: follow it with `platform operations wait`)')
    .requiredOption('--starting-after <seq>', 'replay the events after this seq')
    .option('--until <seq>', 'the last seq replayed (default: the newest event now)')
    .action(
      run(async (g, id: string, o: { startingAfter: string; until?: string }) => {
        const after = Number(o.startingAfter);
        if (!Number.isInteger(after) || after < 0) throw new UsageError(`--starting-after must be a seq, got '${o.startingAfter}'`);
        const op = await platformClient(g).client.eventDestinations.replay(id, {
          startingAfter: after,
          ...(o.until !== undefined ? { until: o.until } : {}),
        });
        print(g, op, () => `Replaying to ${id}: operation ${op.id} ${op.status}`);
      }),
    );

  dest
    .command('deliveries <destinationId>')
    .description("a destination's deliveries with their last attempt, newest first")
    .option('--limit <n>', 'at most this many (1 to 100)', '20')
    .action(
      run(async (g, id: string, o: { limit: string }) => {
        const page = await platformClient(g).client.eventDestinations.deliveries(id, { limit: limitOf(o.limit) });
        print(g, page.data, () => (page.data.length ? deliveryRows(page.data) : 'No deliveries'));
      }),
    );
}

export function registerEventCommands(events: Command): void {
  events
    .command('list')
    .description('a page of the feed in ascending seq (use --starting-after to page on)')
    .option('--type <type>', 'one public event type')
    .option('--brand <brand...>', 'only events of these brands (ids or slugs)')
    .option('--subject-type <type...>', 'only events whose subject has one of these types')
    .option('--subject-id <id>', 'only events about this subject')
    .option('--limit <n>', 'at most this many (1 to 100)', '20')
    .option('--starting-after <seq>', 'after this seq or evt_ id')
    .action(
      run(
        async (
          g,
          // The server checks the vocabulary (400 naming the value): the option's string is passed as given.
          o: { type?: EventType; brand?: string[]; subjectType?: string[]; subjectId?: string; limit: string; startingAfter?: string },
        ) => {
          const page = await platformClient(g).client.events.list({
            type: o.type,
            brands: o.brand,
            subjectTypes: o.subjectType,
            subjectId: o.subjectId,
            limit: limitOf(o.limit),
            startingAfter: o.startingAfter,
          });
          print(g, page.data, () => {
            if (!page.data.length) return 'No events';
            const more = page.hasMore ? `\n(more: --starting-after ${page.data.at(-1)!.seq})` : '';
            return page.data.map(eventLine).join('\n') + more;
          });
        },
      ),
    );

  events
    .command('get <eventId>')
    .description('one event by evt_ id, as the feed and webhooks carry it')
    .action(
      run(async (g, id: string) => {
        const e = await platformClient(g).client.events.retrieve(id);
        print(g, e, () => JSON.stringify(e, null, 2));
      }),
    );
}

export function registerToolCommands(program: Command): void {
  program
    .command('trigger <type>')
    .description('append a public test event (data.test = true) to exercise feeds and webhook receivers (operator token)')
    .option('--organization <id>', "the organization's org_ id (default: the platform token's organization)")
    .option('--brand <brand>', 'the brand (id or slug) the event carries; omitted: an organization-level event')
    .option('--subject-type <type>', 'the subject type', 'test')
    .option('--subject-id <id>', 'the subject id', 'test_1')
    .option('--data <json>', 'the event data, a JSON object', '{}')
    .action(
      run(async (g, type: string, o: { organization?: string; brand?: string; subjectType: string; subjectId: string; data: string }) => {
        const data = jsonObject(o.data, '--data')!;
        let organizationId = o.organization;
        if (!organizationId) {
          const c = creds(g);
          const apiKey = required(c.apiKey, 'organization (or a platform token to find it)', '--organization', 'PLATFORM_API_KEY');
          organizationId = (await new ScopeClient({ token: apiKey, baseUrl: `${c.origin}/api` }).smoke()).orgId;
        }
        const out = await operatorClient(g).appendTestEvent({
          organizationId,
          type,
          brand: o.brand,
          subject: { type: o.subjectType, id: o.subjectId },
          data,
        });
        print(g, out, () => `Appended ${type} ${out.id} to ${organizationId}; it reaches the feed and webhooks once sequenced`);
      }),
    );

  program
    .command('verify')
    .description(
      "check a saved delivery's or broker message's Standard Webhooks signature and print its event (exit 1 when it does not verify)",
    )
    .requiredOption('--secret <whsec>', "the endpoint's signing secret (env PLATFORM_WEBHOOK_SECRET)", process.env.PLATFORM_WEBHOOK_SECRET)
    .requiredOption('--body <file>', 'the raw request body as received ("-" for stdin)')
    .option(
      '--header <name:value...>',
      'webhook-id, webhook-timestamp and webhook-signature, as received (HTTP headers, message headers or stream fields)',
    )
    .option('--headers <file>', 'a JSON object of the received headers')
    .option('--tolerance <seconds>', 'accepted clock difference (default 300); 0 skips the check for an old saved delivery')
    .action(
      run(async (g, o: { secret: string; body: string; header?: string[]; headers?: string; tolerance?: string }) => {
        const body = readFileSync(o.body === '-' ? 0 : o.body);
        const headers: Record<string, string> = {};
        if (o.headers) {
          const parsed = jsonObject(readFileSync(o.headers, 'utf8'), '--headers')!;
          for (const [k, v] of Object.entries(parsed)) headers[k.toLowerCase()] = String(v);
        }
        for (const h of o.header ?? []) {
          const at = h.indexOf(':');
          if (at < 1) throw new UsageError(`--header must be name:value, got '${h}'`);
          headers[h.slice(0, at).trim().toLowerCase()] = h.slice(at + 1).trim();
        }
        const tolerance = o.tolerance === undefined ? undefined : Number(o.tolerance);
        if (tolerance !== undefined && !(Number.isFinite(tolerance) && tolerance >= 0))
          throw new UsageError('--tolerance must be a number of seconds');
        // 0 means "do not check the age": a saved delivery is verified for its signature alone.
        const stamp = headers['webhook-timestamp'];
        const now = tolerance === 0 && stamp && /^\d+$/.test(stamp) ? new Date(Number(stamp) * 1000) : undefined;
        const event = await webhooks.verify(new Uint8Array(body), headers, o.secret, {
          toleranceSeconds: tolerance || undefined,
          now,
        });
        print(g, event, () => `Verified ${event.id} (${event.type}, seq ${event.seq})`);
        return EXIT.ok;
      }),
    );
}

export function registerAssertionCommands(program: Command): void {
  const assertions = program.command('assertions').description('claims about entities (assertions:read / assertions:write)');
  const subject = (c: Command) =>
    c
      .option('--entity <id>', 'the ent_ id')
      .option('--external-user-id <id>', 'your user id (with --issuer)')
      .option('--issuer <issuer>', 'who issued the external user id');

  subject(assertions.command('create'))
    .description('state a claim (201 appended, 200 when unchanged)')
    .requiredOption('--key <key>', 'the claim key, e.g. verified')
    .option('--value <n>', 'a number, true or false (default 1)')
    .option('--expires-at <date>', 'RFC 3339, in the future')
    .action(
      run(async (g, o: { key: string; value?: string; expiresAt?: string; entity?: string; externalUserId?: string; issuer?: string }) => {
        const value = o.value === undefined ? undefined : o.value === 'true' ? true : o.value === 'false' ? false : Number(o.value);
        if (typeof value === 'number' && !Number.isFinite(value)) throw new UsageError(`--value must be a number, true or false`);
        const a = await platformClient(g).client.assertions.create({ ...subjectOf(o), key: o.key, value, expiresAt: o.expiresAt });
        print(g, a, () => `${a.id}  ${a.action} ${a.key}=${a.value} on ${a.entity}${a.expiresAt ? ` until ${a.expiresAt}` : ''}`);
      }),
    );

  subject(assertions.command('revoke'))
    .description('revoke a claim (nothing appended when it was absent)')
    .requiredOption('--key <key>', 'the claim key')
    .action(
      run(async (g, o: { key: string; entity?: string; externalUserId?: string; issuer?: string }) => {
        const r = await platformClient(g).client.assertions.revoke({ ...subjectOf(o), key: o.key });
        print(g, r, () => (r.revoked ? `Revoked ${o.key} (${r.assertion?.id})` : `${o.key} was not present; nothing revoked`));
      }),
    );

  subject(assertions.command('list'))
    .description("an entity's current claims")
    .option('--key <key>', 'only this key')
    .option('--include-expired', 'include expired claims')
    .option('--limit <n>', 'at most this many (1 to 100)', '20')
    .action(
      run(
        async (
          g,
          o: { key?: string; includeExpired?: boolean; limit: string; entity?: string; externalUserId?: string; issuer?: string },
        ) => {
          const page = await platformClient(g).client.assertions.list({
            ...subjectOf(o),
            key: o.key,
            includeExpired: o.includeExpired,
            limit: limitOf(o.limit),
          });
          print(g, page.data, () =>
            page.data.length
              ? page.data.map((a) => `${a.id}  ${a.key}=${a.value}${a.expiresAt ? ` until ${a.expiresAt}` : ''}`).join('\n')
              : 'No claims',
          );
        },
      ),
    );
}

export function registerDistributionCommands(program: Command): void {
  const dist = program
    .command('distributions')
    .description('distributions and their deployments (distributions:read / :write / :launch); verbs answer an operation');

  const accepted = (verb: 'launch' | 'pause' | 'resume' | 'cancel', what: string) =>
    dist
      .command(`${verb} <distributionId>`)
      .description(`${what}; prints the operation to follow with \`platform operations wait\``)
      .action(
        run(async (g, id: string) => {
          const out = await platformClient(g).client.distributions[verb](id);
          print(g, out, () => `${out.distribution.id} ${out.distribution.status}; operation ${out.operation.id} ${out.operation.status}`);
        }),
      );

  dist
    .command('create')
    .description('create a distribution and start its launch (reserves the budget from the brand wallet)')
    .requiredOption('--name <name>', 'a name')
    .requiredOption('--budget <minor>', 'budget in minor units')
    .requiredOption('--deployment <json...>', 'a deployment as JSON, e.g. \'{"provider":"sandbox","config":{}}\' (repeatable)')
    .action(
      run(async (g, o: { name: string; budget: string; deployment: string[] }) => {
        const budget = Number(o.budget);
        if (!Number.isInteger(budget) || budget < 0) throw new UsageError(`--budget must be a non-negative integer, got '${o.budget}'`);
        const deployments = o.deployment.map((d) => jsonObject(d, '--deployment') as { provider: string });
        const out = await platformClient(g).client.distributions.create({ name: o.name, budget, deployments });
        print(g, out, () => `Created ${out.distribution.id} (${out.distribution.status}); operation ${out.operation.id}`);
      }),
    );

  dist
    .command('list')
    .description('distributions of the selected brand, newest first')
    .option('--status <status>', 'only this status')
    .option('--limit <n>', 'at most this many (1 to 100)', '20')
    .action(
      run(async (g, o: { status?: Distribution['status']; limit: string }) => {
        const page = await platformClient(g).client.distributions.list({ status: o.status, limit: limitOf(o.limit) });
        print(g, page.data, () =>
          page.data.length ? table([['ID', 'STATUS', 'NAME'], ...page.data.map((d) => [d.id, d.status, d.name])]) : 'No distributions',
        );
      }),
    );

  dist
    .command('get <distributionId>')
    .description('one distribution')
    .action(
      run(async (g, id: string) => {
        const d = await platformClient(g).client.distributions.retrieve(id);
        print(g, d, () => JSON.stringify(d, null, 2));
      }),
    );

  accepted('launch', 'relaunch a failed or canceled distribution');
  accepted('pause', 'pause a live distribution');
  accepted('resume', 'resume a paused distribution');
  accepted('cancel', 'cancel a distribution (tears its deployments down)');
}
