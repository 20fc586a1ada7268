import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import { REPLAY_BATCH, REPLAY_MAX_EVENTS } from '../../src/domain/webhook/replay.ts';
import { operationsConfig } from '../operation/helpers.ts';
import { appTest, buildTenant, emitEvent, feedEvents, type TestApp } from '../support/kit.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig } from './receiver.ts';
import { insertEventsAtOnce } from '../support/db-access.ts';

/**
 * Replay as an operation (issue 16): POST /webhook_endpoints/{id}/replay re-sends a seq range to one endpoint,
 * in batches run by the operations engine (drained here), signed like live deliveries plus a webhook-replay header.
 */
// No test here is about timeouts: a generous one keeps an attempt that a loaded machine delays for seconds from
// failing into a retry that the manual clock never makes due (seen once: 45 of 46 deliveries under load 9).
const test = appTest({ config: { ...webhookConfig({ retryScheduleMs: [0, 60_000], timeoutMs: 15_000 }), ...operationsConfig() } });
const rx = await startReceiver();
test.afterAll(() => rx.close());

const SCOPES = ['webhooks:read', 'webhooks:write', 'events:read'];
const P = '/v1/platform';

const replay = (t: TestApp, token: string, id: string, body: Record<string, unknown>) =>
  t.http.post(`${P}/webhook_endpoints/${id}/replay`, body, { token, headers: { 'idempotency-key': randomUUID() } });
const operation = async (t: TestApp, token: string, id: string) => (await t.http.get(`${P}/operations/${id}`, { token })).body.operation;

/** The requests `path` received from the replay `opId` (the endpoint also receives the operation's own operation.* events live). */
const replayedBy = (path: string, opId: string) => rx.for(path).filter((r) => r.headers['webhook-replay'] === opId);

/** Runs the replay to its end: its batches, the deliveries they queue, and the recheck that counts them. */
async function runReplay(t: TestApp) {
  await t.app.operations.drain();
  await settle(t);
  t.clock.advance(t.app.deps.config.operations.recheckMs);
  await t.app.operations.drain();
}

/** `n` events in one statement, every `every`-th of type assertion.revoked (the others assertion.created). */
async function emitMixed(t: TestApp, organizationId: string, n: number, every: number) {
  const events = Array.from({ length: n }, (_, i) => ({
    organizationId,
    type: i % every === 0 ? 'assertion.revoked' : 'assertion.created',
    subject: { type: 'entity', id: 'ent_1' },
    data: { i },
    test: true as const,
  }));
  await insertEventsAtOnce(t, events);
  await t.app.sequencer.flush();
}

test('a replay from a seq re-sends exactly the matching events after it, across batches, signed like live ones and marked as a replay', async ({
  app: t,
}) => {
  const { org, token } = await buildTenant(t, SCOPES);
  const ep = await createEndpoint(t, token, { url: rx.url('/replay-seq'), enabled_events: ['assertion.revoked'] });
  // More events than one batch reads, only every 50th of the endpoint's type: the cursor crosses batches.
  const n = REPLAY_BATCH + 500;
  await emitMixed(t, org.id, n, 50);
  await settle(t);
  const live = rx.for('/replay-seq').length;
  const feed = await feedEvents(t, token, 'type=assertion.revoked');
  expect(live).toBe(feed.length);
  const from = feed[3].seq as number;

  const res = await replay(t, token, ep.id, { starting_after: from });
  expect(res.status, res.text).toBe(202);
  const op = res.body.operation;
  expect(op).toMatchObject({ kind: 'webhook_endpoint.replay', status: 'pending', subject: { type: 'webhook_endpoint', id: ep.id } });
  await runReplay(t);

  const replayed = rx.for('/replay-seq').slice(live);
  const expected = feed.filter((e) => e.seq > from).map((e) => e.id);
  expect(replayed.map((r) => r.headers['webhook-id']).sort()).toEqual([...expected].sort());
  for (const r of replayed) {
    expect(r.headers['webhook-replay']).toBe(op.id);
    expect(() => new Webhook(ep.secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
  }
  const done = await operation(t, token, op.id);
  const considered = n - from; // every event of the range was read, whatever its type
  expect(done).toMatchObject({
    status: 'succeeded',
    progress: { considered, enqueued: expected.length, delivered: expected.length, exhausted: 0 },
    result: { considered, enqueued: expected.length, delivered: expected.length, exhausted: 0 },
  });
  const deliveries = await listDeliveries(t, token, ep.id, '?limit=100');
  expect(deliveries.filter((d) => d.replay_operation_id === op.id)).toHaveLength(expected.length);
  expect(deliveries.filter((d) => d.replay_operation_id === null)).toHaveLength(live);
});

test('only events appended after the endpoint was created are replayed, and only_failed skips the ones it already received', async ({
  app: t,
}) => {
  const { org, token } = await buildTenant(t, SCOPES);
  for (let i = 0; i < 3; i++) await emitEvent(t, org.id);
  t.clock.advance(1); // the endpoint is younger than those three
  let fail = true;
  rx.on('/replay-failed', (_req, res) => {
    res.statusCode = fail ? 500 : 200;
    res.end();
  });
  const ep = await createEndpoint(t, token, { url: rx.url('/replay-failed') });
  fail = false;
  const ok = await emitEvent(t, org.id);
  await settle(t);
  fail = true;
  const failed = [await emitEvent(t, org.id), await emitEvent(t, org.id)];
  await settle(t);
  t.clock.advance(66_000); // the second attempt is due within 60 s ± 10 %
  await settle(t); // both attempts failed: exhausted
  fail = false;
  const res = await replay(t, token, ep.id, { starting_after: 0, only_failed: true });
  expect(res.status, res.text).toBe(202);
  await runReplay(t);
  const sent = replayedBy('/replay-failed', res.body.operation.id);
  expect(sent.map((r) => r.headers['webhook-id']).sort()).toEqual([...failed].sort());
  expect(await operation(t, token, res.body.operation.id)).toMatchObject({
    status: 'succeeded',
    result: { considered: 3, enqueued: 2, delivered: 2 },
  });

  // Without only_failed, by time: every event since the endpoint's creation, none from before it.
  const all = await replay(t, token, ep.id, { since: '2000-01-01T00:00:00Z' });
  expect(all.status, all.text).toBe(202);
  await runReplay(t);
  // The first replay's own operation.succeeded event was appended after the endpoint's creation: it is replayed too.
  const sentAll = replayedBy('/replay-failed', all.body.operation.id).map((r) => JSON.parse(r.body));
  expect(
    sentAll
      .filter((e) => e.type === 'assertion.created')
      .map((e) => e.id)
      .sort(),
  ).toEqual([ok, ...failed].sort());
  expect(sentAll.filter((e) => e.type !== 'assertion.created').map((e) => e.data.object.id)).toEqual([res.body.operation.id]);
});

test('one live replay per endpoint (409 operation_conflict); a cancel stops it and exhausts what it queued', async ({ app: t }) => {
  const { org, token } = await buildTenant(t, SCOPES);
  const ep = await createEndpoint(t, token, { url: rx.url('/replay-cancel') });
  for (let i = 0; i < 3; i++) await emitEvent(t, org.id);
  await settle(t);
  // From now on the receiver fails: the replay's deliveries fail once and wait 60 s for their second attempt.
  rx.on('/replay-cancel', (_req, res) => {
    res.statusCode = 503;
    res.end();
  });

  const first = await replay(t, token, ep.id, { starting_after: 0 });
  expect(first.status, first.text).toBe(202);
  const second = await replay(t, token, ep.id, { starting_after: 0 });
  expect(second.status, second.text).toBe(409);
  expect(second.body.error.code).toBe('operation_conflict');

  // The replay queues its deliveries and waits on them; canceled, it exhausts them: no second attempt is made.
  await t.app.operations.drain();
  await settle(t);
  expect(replayedBy('/replay-cancel', first.body.operation.id)).toHaveLength(3);
  expect((await operation(t, token, first.body.operation.id)).waiting_reason).toBe('awaiting_deliveries');
  const cancel = await t.http.post(`${P}/webhook_endpoints/${ep.id}/replay/cancel`, undefined, { token });
  expect(cancel.status, cancel.text).toBe(202);
  expect(cancel.body.operation).toMatchObject({ kind: 'webhook_endpoint.replay_cancel', target_operation_id: first.body.operation.id });
  await t.app.operations.drain();
  t.clock.advance(66_000);
  await settle(t);
  expect(replayedBy('/replay-cancel', first.body.operation.id)).toHaveLength(3);
  expect(await operation(t, token, first.body.operation.id)).toMatchObject({
    status: 'canceled',
    result: { canceled_by: cancel.body.operation.id, enqueued: 3, delivered: 0, exhausted: 3 },
  });
  expect(await operation(t, token, cancel.body.operation.id)).toMatchObject({
    status: 'succeeded',
    result: { target_operation_id: first.body.operation.id, target_outcome: 'canceled', target_finished_first: false },
  });
  const replayed = (await listDeliveries(t, token, ep.id)).filter((d) => d.replay_operation_id);
  expect(replayed.map((d) => [d.status, d.last_error])).toEqual(Array(3).fill(['exhausted', 'replay canceled']));

  // Nothing live to cancel now: 409; a new replay is accepted.
  const again = await t.http.post(`${P}/webhook_endpoints/${ep.id}/replay/cancel`, undefined, { token });
  expect(again.status, again.text).toBe(409);
  expect(again.body.error.code).toBe('resource_conflict');
  expect((await replay(t, token, ep.id, { starting_after: 0 })).status).toBe(202);
});

test("another organization's endpoint is 404, and bad ranges, types and states are 400", async ({ app: t }) => {
  const { org, token } = await buildTenant(t, SCOPES);
  const ep = await createEndpoint(t, token, { url: rx.url('/replay-bad') });
  await emitEvent(t, org.id);
  const other = await buildTenant(t, SCOPES);
  const foreign = await replay(t, other.token, ep.id, { starting_after: 0 });
  expect(foreign.status).toBe(404);
  expect(foreign.body.error.code).toBe('resource_missing');

  const bad: [Record<string, unknown>, string, string][] = [
    [{}, 'invalid_request', 'starting_after'],
    [{ starting_after: 0, since: '2030-01-01T00:00:00Z' }, 'invalid_request', 'starting_after'],
    [{ starting_after: -1 }, 'invalid_request', 'starting_after'],
    [{ starting_after: 'x' }, 'invalid_request', 'starting_after'],
    [{ since: 'yesterday' }, 'invalid_request', 'since'],
    [{ starting_after: 5, until: 4 }, 'invalid_request', 'until'],
    [{ starting_after: 0, until: 'soon' }, 'invalid_request', 'until'],
    [{ since: '2030-01-02T00:00:00Z', until: '2030-01-01T00:00:00Z' }, 'invalid_request', 'until'],
    [{ starting_after: 0, until: REPLAY_MAX_EVENTS + 1 }, 'invalid_request', 'until'],
    [{ starting_after: 0, types: ['nope.nothing'] }, 'invalid_event_type', 'types'],
    [{ starting_after: 0, only_failed: 'yes' }, 'invalid_request', 'only_failed'],
    [{ starting_after: 0, extra: 1 }, 'invalid_request', 'extra'],
  ];
  for (const [body, code, param] of bad) {
    const res = await replay(t, token, ep.id, body);
    expect([res.status, res.body.error?.code, res.body.error?.param], JSON.stringify(body)).toEqual([400, code, param]);
  }
  // The largest range allowed is accepted.
  expect((await replay(t, token, ep.id, { starting_after: 0, until: REPLAY_MAX_EVENTS })).status).toBe(202);

  await t.http.post(`${P}/webhook_endpoints/${ep.id}`, { status: 'disabled' }, { token });
  const disabled = await replay(t, token, ep.id, { starting_after: 0 });
  expect([disabled.status, disabled.body.error.code]).toEqual([400, 'invalid_status']);
});

test('GraphQL replays and cancels through the same actions', async ({ app: t }) => {
  const { org, token } = await buildTenant(t, SCOPES);
  const ep = await createEndpoint(t, token, { url: rx.url('/replay-gql') });
  await emitEvent(t, org.id);
  const started = await t.http.graphql(
    `mutation($id: ID!) { replayWebhookEndpoint(id: $id, startingAfter: 0, until: "1") { id kind status progress } }`,
    { id: ep.id },
    { token },
  );
  expect(started.body.errors, started.text).toBeUndefined();
  expect(started.body.data.replayWebhookEndpoint).toMatchObject({
    kind: 'webhook_endpoint.replay',
    status: 'PENDING',
    progress: { after_seq: 0, until_seq: 1, considered: 0 },
  });
  const cancel = await t.http.graphql(
    `mutation($id: ID!) { cancelWebhookEndpointReplay(id: $id) { kind targetOperationId } }`,
    { id: ep.id },
    { token },
  );
  expect(cancel.body.data.cancelWebhookEndpointReplay).toEqual({
    kind: 'webhook_endpoint.replay_cancel',
    targetOperationId: started.body.data.replayWebhookEndpoint.id,
  });
});
