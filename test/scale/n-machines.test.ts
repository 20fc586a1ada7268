import { randomBytes } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../support/http.ts';
import { serverProcesses, until, type ServerProcess } from '../support/ops-process.ts';
import { SseSubscription, Subscription, waitUntil, wsClient, type StreamedEvent } from '../support/stream-client.ts';
import { startReceiver, type Received, type Receiver } from '../webhook/receiver.ts';
import { buildTenant, onPostgres } from '../support/kit.ts';

/**
 * The product on N machines (ADR 0006), as real processes on one PostgreSQL:
 * two `PLATFORM_ROLE=api` processes and one `PLATFORM_ROLE=worker`, each
 * `node bin/platform-server.mjs`. Events are written through both API
 * processes at once in two organizations; graphql-ws and SSE subscribers on
 * both API processes and webhook endpoints on a loopback receiver must each
 * get every event of their organization exactly as from one process.
 *
 * The backstop polls are off (one hour): the API processes' streams can only
 * learn of the other's events by NOTIFY, and the worker's fan-out only by
 * NOTIFY or its own sequencer. So the test also proves no event waits for a
 * poll in this topology.
 */
const HOUR_MS = String(3_600_000);
const PER_WRITER = 15;
/** Three processes start at once; on the loaded 2-core machine one start has taken more than 45 s. */
const START_MS = 120_000;
/** Bound on each wait for arrivals (seconds on the loaded machine, never reached when all is well). */
const ARRIVAL_MS = 60_000;

describe.skipIf(!onPostgres())(
  "N machines: two API processes and one worker on one PostgreSQL (PostgreSQL only: PGlite is one process's embedded database)",
  () => {
    const fleet = serverProcesses();
    let rx: Receiver;
    const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
    const clients: Client[] = [];
    const sses: SseSubscription[] = [];
    const spawn = (role: 'api' | 'worker') =>
      fleet.spawn(
        {
          PLATFORM_ROLE: role,
          HOST: '127.0.0.1',
          PORT: '0',
          OPERATOR_TOKEN: operatorToken,
          BOOTSTRAP: '0',
          LOG_LEVEL: 'warn',
          EVENT_STREAM_POLL_MS: HOUR_MS,
          WEBHOOK_POLL_MS: HOUR_MS,
          WEBHOOK_RETRY_SCHEDULE: '0s,1s,1s',
          // The receiver is on 127.0.0.1 and the servers run on PostgreSQL, where loopback delivery is off by default.
          WEBHOOK_ALLOW_LOOPBACK: '1',
        },
        START_MS,
      );

    beforeAll(async () => {
      rx = await startReceiver();
    });
    // Runs before the fleet's own afterAll (hooks unwind in reverse), which stops the processes and drops the database.
    afterAll(async () => {
      await Promise.all(clients.splice(0).map((c) => c.dispose()));
      await Promise.all(sses.splice(0).map((s) => s.close().catch(() => {})));
      await rx?.close();
    });

    it('every event reaches every subscriber on both API processes and every endpoint, in per-organization seq order, with no gap or duplicate', async () => {
      const [api1, api2, worker] = await Promise.all([spawn('api'), spawn('api'), spawn('worker')]);
      const apis = [api1!, api2!];

      // The worker answers its probes and nothing else; the API processes serve the API.
      const w = new HttpClient(worker!.origin);
      expect((await w.get('/healthz')).status).toBe(200);
      expect((await w.get('/readyz')).body).toEqual({ ok: true, database: 'postgres' });
      const feed = await w.get('/v1/platform/events');
      expect([feed.status, feed.body.error.code]).toEqual([404, 'route_not_found']);
      const graphql = await w.post('/graphql', { query: '{ __typename }' });
      expect([graphql.status, graphql.body.error]).toEqual([404, 'route_not_found']);
      // ...and its metrics, behind the operator token like everywhere.
      expect((await w.get('/metrics')).status).toBe(401);
      expect((await w.get('/metrics', { token: operatorToken })).text).toMatch(/^platform_webhook_delivery_backlog \d+$/m);

      // Two organizations, created through the first API process; two endpoints each on the receiver.
      const orgs = await Promise.all(
        ['a', 'b'].map(async (name) => {
          const { org, token } = await buildTenant({ http: new HttpClient(api1!.origin), operatorToken }, [
            'events:read',
            'webhooks:read',
            'webhooks:write',
          ]);
          const endpoints = await Promise.all(
            [1, 2].map(async (i) => {
              const res = await new HttpClient(apis[i - 1]!.origin).post(
                '/v1/platform/webhook_endpoints',
                { url: rx.url(`/${name}/${i}`) },
                { token },
              );
              expect(res.status, res.text).toBe(201);
              return {
                path: `/${name}/${i}`,
                id: res.body.webhook_endpoint.id as string,
                secret: res.body.webhook_endpoint.secret as string,
              };
            }),
          );
          return { name, id: org.id, token, endpoints };
        }),
      );

      // On each API process, per organization: one graphql-ws and one SSE subscriber, from the start of the feed
      // (startingAfter 0) so none can miss an event appended while it registers.
      type Sink = { where: string; org: (typeof orgs)[number]; events: StreamedEvent[]; errors: unknown[] };
      const sinks: Sink[] = [];
      for (const [p, api] of apis.entries()) {
        for (const org of orgs) {
          const client = wsClient(api, `Bearer ${org.token}`);
          clients.push(client);
          const ws = new Subscription(client, { startingAfter: '0' });
          const sse = new SseSubscription(api.origin, org.token, { startingAfter: '0' });
          sses.push(sse);
          sinks.push({ where: `graphql-ws on api${p + 1}, org ${org.name}`, org, events: ws.events, errors: ws.errors });
          sinks.push({ where: `SSE on api${p + 1}, org ${org.name}`, org, events: sse.events, errors: sse.errors });
        }
      }

      const append = (api: ServerProcess, org: (typeof orgs)[number], i: number) =>
        new HttpClient(api.origin)
          .post(
            '/operator/events',
            { organization_id: org.id, type: 'payout.created', subject: { type: 'payout', id: `po_${i}` }, data: { i } },
            { token: operatorToken },
          )
          .then((res) => {
            expect(res.status, res.text).toBe(201);
            return res.body.id as string;
          });

      // One marker per organization, seen by every subscriber: from here on each is live (its listener registered
      // before its replay query), so what follows reaches the other API process's subscribers only by NOTIFY.
      const written = new Map<string, string[]>(orgs.map((o) => [o.id, []]));
      for (const org of orgs) written.get(org.id)!.push(await append(api1!, org, -1));
      const arrived = (s: Sink, n: number) => s.events.length >= n || s.errors.length > 0;
      await waitUntil(
        () => sinks.every((s) => arrived(s, 1)),
        () => `markers: ${sinks.map((s) => `${s.where}: ${s.events.length}`).join('; ')}`,
        ARRIVAL_MS,
      );

      // Four concurrent writers per organization, two through each API process.
      const writers = orgs.flatMap((org) =>
        [0, 1, 2, 3].map(async (k) => {
          const ids: string[] = [];
          for (let i = 0; i < PER_WRITER; i++) ids.push(await append(apis[k % 2]!, org, k * PER_WRITER + i));
          return { org, ids };
        }),
      );
      for (const { org, ids } of await Promise.all(writers)) written.get(org.id)!.push(...ids);
      const perOrg = 1 + 4 * PER_WRITER;

      // The feed, read through the second API process, is the truth: per organization seq 1..n in commit order.
      // A 201 acknowledges the commit; the sequencer numbers it a moment later (ADR 0001), so the read waits for
      // every acknowledged event to be numbered, then asserts the numbers are dense.
      const feeds = new Map<string, { id: string; seq: number }[]>();
      for (const org of orgs) {
        const page = await until('every acknowledged event numbered in the feed', ARRIVAL_MS, async () => {
          const res = await new HttpClient(api2!.origin).get('/v1/platform/events?limit=100', { token: org.token });
          expect(res.status, res.text).toBe(200);
          const data = res.body.data as { id: string; seq: number }[];
          if (data.length < perOrg) return undefined;
          return data.map((e) => ({ id: e.id, seq: Number(e.seq) })).sort((x, y) => x.seq - y.seq);
        });
        expect(page.map((e) => e.seq)).toEqual(Array.from({ length: perOrg }, (_, i) => i + 1));
        expect(new Set(page.map((e) => e.id))).toEqual(new Set(written.get(org.id)));
        feeds.set(org.id, page);
      }

      // Every subscriber: exactly its organization's feed, in seq order, no gap, no duplicate.
      await waitUntil(
        () => sinks.every((s) => arrived(s, perOrg)),
        () => `streams: ${sinks.map((s) => `${s.where}: ${s.events.length}/${perOrg}`).join('; ')}`,
        ARRIVAL_MS,
      );
      for (const s of sinks) {
        expect(s.errors, s.where).toEqual([]);
        expect(
          s.events.map((e) => ({ id: e.id, seq: Number(e.seq) })),
          s.where,
        ).toEqual(feeds.get(s.org.id));
      }

      // Every endpoint: every event of its organization (at least once; deduped by webhook-id none is missing),
      // none of the other's, each signed with the endpoint's secret.
      const got = (path: string) => new Set(rx.for(path).map((r) => r.headers['webhook-id'] as string));
      const endpoints = orgs.flatMap((org) => org.endpoints.map((ep) => ({ org, ...ep })));
      await waitUntil(
        () => endpoints.every((ep) => got(ep.path).size >= perOrg),
        () => `deliveries: ${endpoints.map((ep) => `${ep.path}: ${got(ep.path).size}/${perOrg}`).join('; ')}`,
        ARRIVAL_MS,
      );
      for (const ep of endpoints) {
        expect(got(ep.path), ep.path).toEqual(new Set(written.get(ep.org.id)));
        const hook = new Webhook(ep.secret);
        for (const r of rx.for(ep.path) as Received[]) {
          const body = hook.verify(r.body, r.headers as Record<string, string>) as { id: string; seq: number };
          expect(body.id).toBe(r.headers['webhook-id']);
          expect(feeds.get(ep.org.id)!.find((e) => e.id === body.id)?.seq).toBe(Number(body.seq));
        }
      }

      // The worker made the attempts, and counted them; the API processes made none.
      const attempts = async (p: ServerProcess) =>
        Number(
          /^platform_webhook_attempts_total\{outcome="success"\} (\d+)$/m.exec(
            (await new HttpClient(p.origin).get('/metrics', { token: operatorToken })).text,
          )?.[1] ?? 0,
        );
      expect(await attempts(worker!)).toBeGreaterThanOrEqual(4 * perOrg);
      expect(await attempts(api1!)).toBe(0);

      // Without a worker the API processes still stream, and fan out nothing: deliveries wait for a worker,
      // and a new one catches up on what was sequenced meanwhile.
      expect((await worker!.stop('SIGTERM', 15_000)).code).toBe(0);
      const late = await Promise.all(orgs.flatMap((org) => apis.map((api, p) => append(api, org, 1000 + p))));
      await waitUntil(
        () => sinks.every((s) => arrived(s, perOrg + 2)),
        () => `late events: ${sinks.map((s) => `${s.where}: ${s.events.length}`).join('; ')}`,
        ARRIVAL_MS,
      );
      for (const ep of endpoints) {
        const res = await new HttpClient(api1!.origin).get(`/v1/platform/webhook_endpoints/${ep.id}/deliveries?limit=100`, {
          token: ep.org.token,
        });
        expect(res.status, res.text).toBe(200);
        expect(
          (res.body.data as { event_id: string }[]).filter((d) => late.includes(d.event_id)),
          ep.path,
        ).toEqual([]);
      }
      await spawn('worker');
      await waitUntil(
        () => endpoints.every((ep) => got(ep.path).size >= perOrg + 2),
        () => `catch-up: ${endpoints.map((ep) => `${ep.path}: ${got(ep.path).size}/${perOrg + 2}`).join('; ')}`,
        ARRIVAL_MS,
      );
      for (const s of sinks)
        expect(
          s.events.slice(perOrg).map((e) => Number(e.seq)),
          s.where,
        ).toEqual([perOrg + 1, perOrg + 2]);
    }, 300_000);
  },
);
