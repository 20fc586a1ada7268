import { randomBytes, randomUUID } from 'node:crypto';
import { createClient } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../support/http.ts';
import { spawnServer, until, type ServerProcess } from '../support/ops-process.ts';
import { missingTopologyPackages, startTopology, type Topology } from '../support/patroni.ts';
import { EVENTS_SUBSCRIPTION, SseSubscription, wsUrl, type StreamedEvent } from '../support/stream-client.ts';
import { buildTenant, onPostgres, type Server } from '../support/kit.ts';
import { startReceiver, type Receiver } from '../webhook/receiver.ts';

/**
 * Failover without loss (issue 36): two server processes (as `npm start` runs them) over a highly available
 * PostgreSQL (test/support/patroni.ts: etcd, two Patroni nodes with a synchronous standby, HAProxy as the one host)
 * under load, through three leader changes: (a) kill -9 of the primary's postmaster, (b) kill -9 of the primary
 * node's Patroni and postmaster together, (c) a planned `patronictl switchover` once the old primary rejoined.
 *
 * The load: one writer per organization appending events (through both processes in turn), operations launched,
 * webhook deliveries to a local receiver, and four live subscribers (graphql-ws and SSE, on both processes) that
 * resubscribe from their last seq whenever their stream ends. Accounting as in test/hardening/chaos.test.ts: an
 * acknowledged write is a fact, a failed one indeterminate (it may have committed). Asserted: no acknowledged event
 * lost (from the feed, from every endpoint, from every subscriber); each organization's `seq` dense and ordered; no
 * attempt committed twice; every acknowledged operation settles; the LISTEN connections of both processes are back
 * on the new primary after each fault; every error a client saw is a 503 `service_unavailable` (with Retry-After over
 * HTTP), none after 15 s from the fault. The figures go to the log (docs/operating/failover.md).
 *
 * PostgreSQL leg only; skipped where the Debian packages are missing, unless REQUIRE_TOPOLOGY=1 (then it fails).
 */
const TERMINAL = ['succeeded', 'partial', 'failed', 'canceled'];
const ERRORS_END_WITHIN_MS = 15_000;
const missing = missingTopologyPackages();
const required = process.env.REQUIRE_TOPOLOGY === '1';

/** A client-visible error: when it was answered, on what, and how. */
interface ClientError {
  at: number;
  what: string;
  how: string;
  retryAfter: string | null | undefined;
}

interface Org {
  id: string;
  token: string;
  /** Its endpoints' paths on the receiver. */
  paths: string[];
  ledger: Ledger;
}

interface Ledger {
  /** Acknowledged events: id and the attempt's tag. */
  events: { id: string; attempt: string }[];
  indeterminate: number;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!onPostgres() || (missing.length > 0 && !required))(
  'failover (PostgreSQL only: Patroni, etcd and HAProxy from Debian; REQUIRE_TOPOLOGY=1 fails where they are missing)',
  () => {
    const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
    const servers: ServerProcess[] = [];
    let topology: Topology | undefined;
    let rx: Receiver | undefined;

    beforeAll(async () => {
      if (missing.length) throw new Error(`REQUIRE_TOPOLOGY=1 but Debian's ${missing.join(', ')} not installed`);
      topology = await startTopology();
      rx = await startReceiver();
    }, 180_000);
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop('SIGKILL')));
      await rx?.close();
      await topology?.stop();
    }, 60_000);

    const spawn = async () => {
      const s = await spawnServer(
        {
          DATABASE_URL: topology!.url,
          PORT: '0',
          OPERATOR_TOKEN: operatorToken,
          BOOTSTRAP: '0',
          LOG_LEVEL: 'error',
          WEBHOOK_ALLOW_LOOPBACK: '1',
          WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s,1s,1s,1s,1s,1s,1s,1s',
          WEBHOOK_TIMEOUT_MS: '2000',
          WEBHOOK_LEASE_MS: '3000',
          WEBHOOK_POLL_MS: '200',
          OPERATION_LEASE_MS: '2000',
          OPERATIONS_POLL_MS: '200',
          OPERATION_RETRY_BASE_MS: '200',
        },
        90_000,
      );
      servers.push(s);
      return s;
    };

    it('survives two kills of the primary and a switchover: nothing acknowledged lost, seq dense, every stream resumed, only short 503s', {
      timeout: 420_000,
    }, async () => {
      const topo = topology!;
      // One at a time: the first applies the migrations.
      const a = await spawn();
      const b = await spawn();
      const fronts = [a, b].map((s) => ({ http: new HttpClient(s.origin), operatorToken }) as Server);
      const errors: ClientError[] = [];
      const began = Date.now();
      const mark = (what: string) => console.log(`failover +${((Date.now() - began) / 1000).toFixed(1)} s: ${what}`);
      const serverLogs = () =>
        servers
          .map(
            (s, i) =>
              `--- server ${i}\n${s
                .output()
                .split('\n')
                .slice(-15)
                .map((l) => l.slice(0, 400))
                .join('\n')}`,
          )
          .join('\n');

      // Requests with a bound: a request that gets no answer in 30 s is an error of its own kind (never acceptable).
      const call = async (
        front: Server,
        method: string,
        path: string,
        body: unknown,
        token: string,
        headers: Record<string, string> = {},
      ) => {
        const res = await fetch(front.http.origin + path, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        }).catch(() => undefined);
        if (!res) return { status: 0, body: undefined as any, retryAfter: undefined };
        const text = await res.text().catch(() => '');
        let parsed: any;
        try {
          parsed = JSON.parse(text);
        } catch {}
        return { status: res.status, body: parsed, retryAfter: res.headers.get('retry-after') };
      };
      const failed = (what: string, res: { status: number; body: any; retryAfter: string | null | undefined }) =>
        errors.push({
          at: Date.now(),
          what,
          how: res.status
            ? `${res.status} ${res.body?.error?.code ?? res.body?.error ?? res.body?.errors?.[0]?.extensions?.code}`
            : 'no answer',
          retryAfter: res.retryAfter,
        });

      // Two organizations, each with two endpoints on the receiver and a token for launches and the stream.
      const orgs: Org[] = [];
      for (let i = 0; i < 2; i++) {
        const { org, token } = await buildTenant(fronts[0]!, [
          'webhooks:write',
          'events:read',
          'distributions:read',
          'distributions:write',
          'distributions:launch',
        ]);
        const paths: string[] = [];
        for (let j = 0; j < 2; j++) {
          const path = `/o${i}/${j}`;
          const res = await fronts[0]!.http.post('/v1/platform/webhook_endpoints', { url: rx!.url(path) }, { token });
          expect(res.status, res.text).toBe(201);
          paths.push(path);
        }
        orgs.push({ id: org.id, token, paths, ledger: { events: [], indeterminate: 0 } as Ledger });
      }

      // Every LISTEN connection of both processes (events, credentials, operations), as the primary sees them: a session
      // whose last statement was its LISTEN, or the empty query the credential cache sends on it (src/runtime/credential-cache.ts).
      let listeners = '';
      const listening = async (): Promise<number> => {
        const client = new pg.Client({ connectionString: topo.url, connectionTimeoutMillis: 2000, query_timeout: 2000 });
        client.on('error', () => {});
        try {
          await client.connect();
          const { rows } = await client.query(
            `select query from pg_stat_activity where backend_type = 'client backend' and (query ilike 'LISTEN %' or query = '')`,
          );
          listeners = rows.map((r) => r.query || '(empty)').join(', ');
          return rows.length;
        } catch (e) {
          listeners = String(e);
          return -1;
        } finally {
          await client.end().catch(() => {});
        }
      };
      await until(
        'both processes listening',
        30_000,
        async () => (await listening()) === 6 || undefined,
        () => listeners,
      );

      // The load: a writer per organization, a launcher, four resuming subscribers.
      let running = true;
      const writer = async (o: Org, i: number) => {
        for (let n = 0; running; n++) {
          const attempt = `${i}-${n}`;
          const res = await call(
            fronts[n % 2]!,
            'POST',
            '/operator/events',
            {
              organization_id: o.id,
              type: 'assertion.created',
              subject: { type: 'entity', id: `ent_${n}` },
              data: { attempt },
            },
            operatorToken,
          );
          if (res.status === 201) o.ledger.events.push({ id: res.body.id, attempt });
          else {
            o.ledger.indeterminate++;
            failed('append', res);
          }
          await pause(res.status === 201 ? 40 : 250);
        }
      };
      const operations: string[] = [];
      const launcher = async () => {
        for (let n = 0; running; n++) {
          const res = await call(
            fronts[n % 2]!,
            'POST',
            '/v1/platform/distributions',
            { name: 'Failover', budget: 0, deployments: [0, 1].map(() => ({ provider: 'sandbox', config: { delay_ms: 300 } })) },
            orgs[0]!.token,
            { 'idempotency-key': randomUUID() },
          );
          if (res.status === 202) operations.push(res.body.operation.id);
          else failed('launch', res);
          await pause(400);
        }
      };
      const subscribers = [
        resuming('graphql-ws', b.origin, orgs[0]!.token, errors),
        resuming('sse', a.origin, orgs[0]!.token, errors),
        resuming('graphql-ws', a.origin, orgs[1]!.token, errors),
        resuming('sse', b.origin, orgs[1]!.token, errors),
      ];
      const subscriberOrg = [0, 0, 1, 1];
      const load = [writer(orgs[0]!, 0), writer(orgs[1]!, 1), launcher()];

      const acked = () => orgs.reduce((n, o) => n + o.ledger.events.length, 0);
      /** Both writers acknowledged `n` more appends and the LISTEN connections are all back: the product recovered. */
      const recovered = async (what: string) => {
        const from = orgs.map((o) => o.ledger.events.length);
        await until(
          `${what}: 10 more acknowledged appends per organization`,
          60_000,
          async () => orgs.every((o, i) => o.ledger.events.length >= from[i]! + 10) || undefined,
          serverLogs,
        );
        await until(
          `${what}: the 6 LISTEN connections on the new primary`,
          30_000,
          async () => (await listening()) === 6 || undefined,
          () => `${listeners}\n${serverLogs()}`,
        );
      };

      try {
        await until(
          'load under way',
          60_000,
          async () => (acked() >= 40 && operations.length >= 2 && subscribers.every((s) => s.events.length > 0)) || undefined,
          serverLogs,
        );
        expect(errors, 'no error before the first fault').toEqual([]);
        const faults: { name: string; injected: number; at: number; from: string; to: string; leaderMovedMs: number }[] = [];
        /**
         * One fault: injected on the leader; every subscriber then drops its stream and resumes from its cursor while
         * the database is away; the leader must move (Patroni's REST, a write through HAProxy, and patronictl agree);
         * then the product recovers and the old leader rejoins as the synchronous standby.
         */
        const fault = async (
          name: string,
          inject: (leader: string) => Promise<number | undefined> | undefined,
          then: { restart?: boolean; rejoin?: boolean } = {},
        ) => {
          const from = (await topo.leader())!;
          const injected = Date.now();
          // A kill is the fault's instant; a switchover's is when the old leader stops being primary (it tells).
          const at = (await inject(from)) ?? injected;
          for (const s of subscribers) s.reconnect();
          const to = await topo.waitForLeader(from, 60_000);
          faults.push({ name, injected, at, from, to, leaderMovedMs: Date.now() - at });
          const list = JSON.parse(await topo.patronictl('list', '-f', 'json')) as { Member: string; Role: string }[];
          expect(list.find((m) => m.Role === 'Leader')?.Member, JSON.stringify(list)).toBe(to);
          expect(to).not.toBe(from);
          if (then.restart) topo.startNode(from);
          await Promise.all([recovered(name), then.rejoin === false || topo.waitForSyncStandby(from, 120_000)]);
          mark(`${name}: ${from} -> ${to}, recovered${then.rejoin === false ? '' : `, ${from} rejoined`}`);
          return to;
        };

        mark('load under way');
        await fault('kill -9 postmaster', (leader) => void topo.killPostgres(leader));
        // The node's Patroni is gone too: it is started again once the leader moved, and rejoins (pg_rewind).
        await fault('kill -9 Patroni and postmaster', (leader) => topo.killNode(leader).then(() => undefined), { restart: true });
        // Planned, once the old primary rejoined: back to it.
        await fault(
          'patronictl switchover',
          async (leader) => {
            const candidate = topo.nodes.find((n) => n.name !== leader)!.name;
            const demoted = topo.primaryEnds(leader, 60_000);
            await topo.patronictl('switchover', '--leader', leader, '--candidate', candidate, '--force');
            return demoted;
          },
          { rejoin: false },
        );

        mark('settling');
        running = false;
        await Promise.all(load);

        // Settle: every acknowledged event delivered to every endpoint and streamed to its subscribers, every operation terminal.
        const feeds = orgs.map(
          () => [] as { id: string; seq: number; type: string; subject: { id: string }; data: { attempt?: string } }[],
        );
        const readFeeds = async () => {
          for (const [i, o] of orgs.entries()) {
            const feed = feeds[i]!;
            for (;;) {
              const after = feed.length ? `&starting_after=${feed[feed.length - 1]!.seq}` : '';
              const res = await fronts[0]!.http.get(`/v1/platform/events?limit=100${after}`, { token: o.token });
              expect(res.status, res.text).toBe(200);
              feed.push(...res.body.data);
              if (!res.body.has_more) break;
            }
          }
        };
        const lostAt = (o: Org) => {
          let lost = 0;
          for (const path of o.paths) {
            const got = new Set(rx!.for(path).map((r) => String(r.headers['webhook-id'])));
            lost += o.ledger.events.filter((e) => !got.has(e.id)).length;
          }
          return lost;
        };
        const stuck = async () => {
          const live: string[] = [];
          for (const id of operations) {
            const res = await fronts[1]!.http.get(`/v1/platform/operations/${id}`, { token: orgs[0]!.token });
            if (!TERMINAL.includes(res.body?.operation?.status)) live.push(`${id}:${res.body?.operation?.status ?? res.status}`);
          }
          return live;
        };
        await readFeeds();
        let live: string[] = [];
        await until(
          'every acknowledged event delivered and streamed, every operation settled',
          120_000,
          async () => {
            live = await stuck();
            return (
              (live.length === 0 &&
                orgs.every((o) => lostAt(o) === 0) &&
                subscribers.every((s, i) => (s.events.at(-1)?.seq ?? 0) >= feeds[subscriberOrg[i]!]!.at(-1)!.seq)) ||
              undefined
            );
          },
          () =>
            `stuck: ${live.slice(0, 5)}; lost: ${orgs.map(lostAt)}; subscribers at ${subscribers.map((s) => s.events.at(-1)?.seq)}\n${serverLogs()}`,
        );
        await readFeeds(); // anything sequenced while settling (operations append events)
        mark('settled');

        // The figures first (docs/operating/failover.md), whatever the verdict.
        const terminal = feeds[0]!.filter((e) => ['operation.succeeded', 'operation.failed', 'operation.canceled'].includes(e.type));
        const settledTwice = terminal.length - new Set(terminal.map((e) => e.subject.id)).size;
        const report = faults.map((f, k) => {
          const mine = errors.filter((e) => e.at >= f.injected && e.at < (faults[k + 1]?.injected ?? Number.POSITIVE_INFINITY));
          return {
            fault: f.name,
            leader: `${f.from} -> ${f.to}`,
            leader_moved_ms: f.leaderMovedMs,
            client_errors: mine.length,
            errors_end_ms: mine.length ? Math.max(...mine.map((e) => e.at)) - f.at : 0,
          };
        });
        const repeats = (ids: string[]) => ids.length - new Set(ids).size;
        const count = (keys: string[]) => keys.reduce<Record<string, number>>((m, k) => ((m[k] = (m[k] ?? 0) + 1), m), {});
        console.log(
          `failover: ${JSON.stringify({
            faults: report,
            events_acknowledged: acked(),
            writes_indeterminate: orgs.reduce((n, o) => n + o.ledger.indeterminate, 0),
            committed_unacknowledged: orgs.reduce(
              (n, o, i) => n + feeds[i]!.filter((e) => e.data?.attempt).length - o.ledger.events.length,
              0,
            ),
            deliveries_received: rx!.received.length,
            delivery_duplicates: orgs.reduce(
              (n, o) => n + o.paths.reduce((m, p) => m + repeats(rx!.for(p).map((r) => String(r.headers['webhook-id']))), 0),
              0,
            ),
            operations_launched: operations.length,
            operations_stuck: live.length,
            operations_settled_twice: settledTwice,
            subscriber_resumptions: subscribers.map((s) => `${s.kind}:${s.resumptions}`),
            errors_by_kind: count(errors.map((e) => `${e.what}: ${e.how}`)),
          })}`,
        );

        // Acknowledged writes lost: 0; seq dense from 1 and ordered; no attempt committed twice.
        for (const [i, o] of orgs.entries()) {
          const feed = feeds[i]!;
          expect(feed.map((e) => e.seq)).toEqual(feed.map((_, k) => k + 1));
          const inFeed = new Set(feed.map((e) => e.id));
          expect(o.ledger.events.filter((e) => !inFeed.has(e.id))).toEqual([]);
          expect(repeats(feed.flatMap((e) => (e.data?.attempt ? [e.data.attempt] : []))), 'attempts committed twice').toBe(0);
        }
        // An operation settles once: one terminal event each, however often its lease moved.
        expect(settledTwice, 'operations settled twice').toBe(0);
        // Every subscriber: the feed itself, in order, from seq 1, across its resumptions.
        for (const [i, s] of subscribers.entries()) {
          const feed = feeds[subscriberOrg[i]!]!;
          expect(
            s.events.map((e) => `${e.seq}:${e.id}`),
            `${s.kind} subscriber of org ${subscriberOrg[i]}`,
          ).toEqual(feed.slice(0, s.events.length).map((e) => `${e.seq}:${e.id}`));
        }
        // Client-visible errors: 503 service_unavailable (Retry-After over HTTP), ending within 15 s of each fault.
        const unhandled = servers
          .flatMap((s) => s.output().split('\n'))
          .filter((l) => l.includes('"level":50') && l.includes('unhandled'))
          .slice(0, 3)
          .map((l) => l.slice(0, 3000))
          .join('\n');
        const kinds = [...new Set(errors.map((e) => e.how))];
        expect(
          kinds.filter((k) => k !== '503 service_unavailable' && k !== 'stream service_unavailable'),
          unhandled,
        ).toEqual([]);
        expect(errors.filter((e) => e.how.startsWith('503') && !e.retryAfter)).toEqual([]);
        for (const r of report)
          expect(r.errors_end_ms, `${r.fault}: client errors ended ${r.errors_end_ms} ms after it`).toBeLessThanOrEqual(
            ERRORS_END_WITHIN_MS,
          );
      } finally {
        running = false;
        await Promise.allSettled(load);
        for (const s of subscribers) await s.close();
      }
    });
  },
);

interface Resuming {
  kind: string;
  events: StreamedEvent[];
  resumptions: number;
  /** Drops the stream (as a client whose connection broke): it resubscribes from its cursor. */
  reconnect(): void;
  close(): Promise<void>;
}

/**
 * A live subscriber as a careful client writes one: it subscribes from seq 0 and, whenever its stream ends or
 * errs, resubscribes with `startingAfter` set to the last seq it received (after the error's Retry-After, else at
 * once). Every error it sees goes to `errors`.
 */
function resuming(kind: 'graphql-ws' | 'sse', origin: string, token: string, errors: ClientError[]): Resuming {
  const self: Resuming = { kind, events: [], resumptions: 0, reconnect: () => current?.stop(), close: async () => {} };
  let closed = false;
  let current: { stop(): void; ended: Promise<void> } | undefined;
  const from = () => String(self.events.at(-1)?.seq ?? 0);
  const took = (e: StreamedEvent) => self.events.push(e);
  let failures = 0;
  const erred = (how: string, retryAfter?: string | null) => {
    failures++;
    errors.push({ at: Date.now(), what: kind, how, retryAfter });
  };

  const openWs = () => {
    const client = createClient({
      url: wsUrl({ origin }),
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${token}` },
    });
    let stop = () => {};
    let stopped = false;
    const ended = new Promise<void>((resolve) => {
      const unsubscribe = client.subscribe<{ events: StreamedEvent }>(
        { query: EVENTS_SUBSCRIPTION, variables: { startingAfter: from() } },
        {
          next: (r) => {
            for (const e of r.errors ?? []) erred(`stream ${(e.extensions as { code?: string } | undefined)?.code}`);
            if (r.data?.events) took(r.data.events);
          },
          error: (err) => {
            if (!stopped)
              erred(Array.isArray(err) ? `stream ${err[0]?.extensions?.code}` : `ws closed ${(err as { code?: number })?.code ?? err}`);
            resolve();
          },
          complete: () => resolve(),
        },
      );
      stop = () => {
        stopped = true;
        unsubscribe();
        void client.dispose();
        resolve();
      };
    });
    return { stop, ended: ended.then(() => client.dispose()) };
  };

  const openSse = () => {
    const sse = new SseSubscription(origin, token, { startingAfter: from() }, { onEvent: took });
    const ended = sse.done.then(() => {
      const codes = sse.errors.map((e) => e.extensions?.code ?? e.message);
      if (sse.status !== 200) erred(`${sse.status} ${codes[0]}`, sse.retryAfter);
      else for (const code of codes) erred(`stream ${code}`);
    });
    return { stop: () => void sse.close().catch(() => {}), ended };
  };

  const run = (async () => {
    while (!closed) {
      const before = failures;
      current = kind === 'sse' ? openSse() : openWs();
      await current.ended;
      if (closed) break;
      self.resumptions++;
      await pause(failures > before ? 500 : 50); // a refusal says "retry shortly"
    }
  })();
  self.close = async () => {
    closed = true;
    current?.stop();
    await run;
  };
  return self;
}
