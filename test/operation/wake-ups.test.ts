import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, describe, expect } from 'vitest';
import type { App } from '../../src/app.ts';
import { type Receiver, startReceiver, webhookConfig } from '../webhook/receiver.ts';
import type { HttpClient } from '../support/http.ts';
import { appTest, onPostgres, type RunningApp, startSecondApp, type TestApp } from '../support/kit.ts';
import { seedLedger } from '../support/db-access.ts';
import { ALL_SCOPES, operationsConfig, sandbox, tenant, type Tenant } from './helpers.ts';

/**
 * Every waiting reason is woken by the domain event that clears its blocker (ADR 0004, "Waiting is alive"): the
 * poll and the recheck are an hour here, so an operation that is not woken stays waiting and its row fails. Each
 * row parks an operation on its reason, then does what clears the blocker, through the public routes (the sandbox
 * provider's operator callbacks stand in for a provider's), and awaits the operation's settlement over HTTP. On
 * PostgreSQL the table runs again across two processes: every request goes through B, which runs no operations
 * worker, and A's worker must be woken by B's commits (NOTIFY); B's webhook worker makes the delivery attempts.
 */
const HOUR = 3_600_000;
const test = appTest({ config: { ...operationsConfig({ worker: true, pollMs: HOUR, recheckMs: HOUR }), ...webhookConfig() } });
const P = '/v1/platform';
/** Bound on one step of a row: far below the hour-long backstops, generous for a loaded machine. */
const BOUND_MS = 20_000;
const TERMINAL = ['succeeded', 'partial', 'failed', 'canceled'];

/** Where a row's requests go (`http`) and whose worker runs its operations (`worker`). */
interface Topology {
  http: HttpClient;
  operatorToken: string;
  worker: App;
  /** Moves every process's clock (a provider's decision time, reached). */
  advance(ms: number): void;
}

interface Row {
  reason: string;
  kind: string;
  /** What clears the blocker. */
  by: string;
  /** Parks the operation on `reason`; returns it and what clears the blocker. */
  park(on: Topology, who: Tenant): Promise<{ id: string; clear: () => Promise<void> }>;
  /** The status it settles in once woken. */
  settles: string;
}

let rx: Receiver;
/** Replayed requests held open until released: the replay's delivery is live while the replay counts it. */
const held: (() => void)[] = [];
const holding = (req: IncomingMessage, res: ServerResponse) => {
  if (!req.headers['webhook-replay']) return void res.end('ok');
  held.push(() => res.end('ok'));
};

const post = async (on: Topology, who: Tenant | null, path: string, body?: unknown) => {
  const res = await on.http.post(path, body, {
    token: who ? who.token : on.operatorToken,
    headers: who ? { 'idempotency-key': randomUUID() } : undefined,
  });
  expect(res.status, `${path}: ${res.text}`).toBeLessThan(300);
  return res.body;
};
const get = async (on: Topology, who: Tenant, path: string) => {
  const res = await on.http.get(`${P}${path}`, { token: who.token });
  expect(res.status, `${path}: ${res.text}`).toBe(200);
  return res.body;
};

/**
 * Reads the operation over HTTP until `ok` holds, each time the worker's process reports a change to it (and at
 * least every 250 ms, for changes this process does not see); fails after BOUND_MS with what it last read.
 */
async function until(on: Topology, who: Tenant, id: string, ok: (op: any) => boolean): Promise<any> {
  const deadline = Date.now() + BOUND_MS;
  for (;;) {
    const stop = new AbortController();
    const changed = on.worker.operations.nextChange(id, 250, stop.signal);
    const { operation } = await get(on, who, `/operations/${id}`);
    if (ok(operation)) {
      stop.abort();
      return operation;
    }
    if (Date.now() >= deadline) {
      stop.abort();
      throw new Error(`operation ${id} (${operation.kind}) still ${operation.status}/${operation.waiting_reason} after ${BOUND_MS} ms`);
    }
    await changed;
  }
}
const waitingOn = (reason: string) => (op: any) => op.status === 'waiting' && op.waiting_reason === reason;

const launch = async (on: Topology, who: Tenant, body: Record<string, unknown>) =>
  (await post(on, who, `${P}/distributions`, { name: 'Wake', budget: 0, ...body })) as { operation: any; distribution: any };
const childOf = async (on: Topology, who: Tenant, launchId: string) =>
  (await get(on, who, `/operations?parent_operation_id=${launchId}`)).data[0];
const deploymentsOf = async (on: Topology, who: Tenant, distribution: string) =>
  (await get(on, who, `/deployments?distribution=${distribution}`)).data as any[];
const review = (on: Topology, deployment: string) =>
  post(on, null, `/operator/sandbox/deployments/${deployment}/review`, { decision: 'approve' });
const cleanup = (on: Topology, deployment: string) =>
  post(on, null, `/operator/sandbox/deployments/${deployment}/cleanup`, { outcome: 'succeeded' });
const connect = async (on: Topology, who: Tenant) =>
  post(on, who, `${P}/connections`, {
    external_user_id: randomUUID(),
    issuer: 'https://idp.example',
    provider: 'sandbox',
    account_id: randomUUID(),
    grants: ['videos:publish'],
  });

/** A launch whose one deployment waits on the provider's review: the child waits provider_review, the launch on it. */
async function inReview(on: Topology, who: Tenant, over: Record<string, unknown> = {}) {
  const { operation, distribution } = await launch(on, who, { deployments: [{ ...sandbox({ outcome: 'review' }), ...over }] });
  await until(on, who, operation.id, waitingOn('awaiting_children_settle'));
  const child = await until(on, who, (await childOf(on, who, operation.id)).id, waitingOn('provider_review'));
  return { launch: operation, child, deployment: child.subject.id as string, distribution: distribution.id as string };
}

/** A replay whose one delivery is held open by the receiver: the replay waits awaiting_deliveries. */
async function replaying(on: Topology, who: Tenant) {
  const path = `/replay-${randomUUID()}`;
  rx.on(path, holding);
  const { webhook_endpoint: ep } = await post(on, who, `${P}/webhook_endpoints`, { url: rx.url(path) });
  await post(on, null, '/operator/events', {
    organization_id: who.orgId,
    type: 'assertion.created',
    subject: { type: 'entity', id: 'ent_1' },
    data: {},
  });
  const ready = held.length;
  const { operation } = await post(on, who, `${P}/webhook_endpoints/${ep.id}/replay`, { starting_after: 0 });
  await until(on, who, operation.id, waitingOn('awaiting_deliveries'));
  await rx.waitFor(2, path); // the live delivery, then the replayed one
  expect(held.length).toBe(ready + 1);
  return { endpoint: ep.id as string, id: operation.id as string, release: held.pop()! };
}

/**
 * How long the sandbox payout provider holds a payout for review (of the clock; the run's timer waits as long in real
 * time). A timer that fires before the test advances the clock finds the review not yet due and waits again, so a
 * short hold cannot settle a row early; it only bounds how long the row waits once the clock has moved.
 */
const REVIEW_MS = 2000;

/**
 * A payout run of three seeded ledger entries (7 each, in a closed day) through the worker's sandbox provider, set
 * to hold every payout for review (`review`) or to pay at once.
 */
async function payoutRun(on: Topology, who: Tenant, review: boolean) {
  on.worker.deps.config.payouts = review ? { sandbox: { outcome: 'review', review: { afterMs: REVIEW_MS } } } : {};
  const day = new Date(on.worker.deps.clock.now().getTime() - 2 * 86_400_000);
  await seedLedger(on.worker.deps.db.prisma, who.orgId, who.brand, 3, day);
  return (await post(on, who, `${P}/payouts/runs`, { period_end: new Date(day.getTime() + 86_400_000).toISOString() })).operation;
}

/** A funded run whose payouts the provider holds: it waits provider_review. */
async function heldRun(on: Topology, who: Tenant) {
  await post(on, null, `/operator/brands/${who.brand}/wallet/top_up`, { amount: 21 });
  const run = await payoutRun(on, who, true);
  return until(on, who, run.id, waitingOn('provider_review'));
}

const rows: Row[] = [
  {
    reason: 'funding_required',
    kind: 'distribution.launch',
    by: 'a wallet top-up',
    async park(on, who) {
      const { operation } = await launch(on, who, { budget: 500, deployments: [sandbox()] });
      await until(on, who, operation.id, waitingOn('funding_required'));
      return {
        id: operation.id,
        clear: async () => void (await post(on, null, `/operator/brands/${who.brand}/wallet/top_up`, { amount: 500 })),
      };
    },
    settles: 'succeeded',
  },
  {
    reason: 'provider_review',
    kind: 'deployment.provision',
    by: "the provider's review decision",
    async park(on, who) {
      const r = await inReview(on, who);
      return { id: r.child.id, clear: async () => void (await review(on, r.deployment)) };
    },
    settles: 'succeeded',
  },
  {
    reason: 'awaiting_children_settle',
    kind: 'distribution.launch',
    by: 'its last child settling',
    async park(on, who) {
      const r = await inReview(on, who);
      return { id: r.launch.id, clear: async () => void (await review(on, r.deployment)) };
    },
    settles: 'succeeded',
  },
  {
    reason: 'awaiting_target_settle',
    kind: 'distribution.cancel',
    by: 'its target settling (a launch whose child waits provider_review, canceled)',
    async park(on, who) {
      const r = await inReview(on, who);
      return {
        id: r.launch.id,
        clear: async () => {
          const { operation } = await post(on, who, `${P}/distributions/${r.distribution}/cancel`);
          expect(operation).toMatchObject({ kind: 'distribution.cancel', target_operation_id: r.launch.id });
          // The launch settles canceled at once; the cancel, woken by that, tears down and settles too.
          expect(await until(on, who, operation.id, (op) => TERMINAL.includes(op.status))).toMatchObject({
            status: 'succeeded',
            result: { target_outcome: 'canceled' },
          });
        },
      };
    },
    settles: 'canceled',
  },
  {
    reason: 'awaiting_cleanup',
    kind: 'distribution.cancel',
    by: "the provider's teardown report",
    async park(on, who) {
      const { operation, distribution } = await launch(on, who, { deployments: [sandbox({ cleanup: 'async' })] });
      await until(on, who, operation.id, (op) => op.status === 'succeeded');
      const cancel = (await post(on, who, `${P}/distributions/${distribution.id}/cancel`)).operation;
      await until(on, who, cancel.id, waitingOn('awaiting_cleanup'));
      const [dep] = await deploymentsOf(on, who, distribution.id);
      return { id: cancel.id, clear: async () => void (await cleanup(on, dep.id)) };
    },
    settles: 'succeeded',
  },
  {
    reason: 'awaiting_target_settle',
    kind: 'deployment.teardown',
    by: 'the provision on its deployment settling',
    async park(on, who) {
      const conn = await connect(on, who);
      const r = await inReview(on, who, { connection: conn.id });
      const [teardown] = (await post(on, who, `${P}/connections/${conn.id}/revoke`)).teardowns;
      await until(on, who, teardown.id, waitingOn('awaiting_target_settle'));
      return { id: teardown.id, clear: async () => void (await review(on, r.deployment)) };
    },
    settles: 'succeeded',
  },
  {
    reason: 'awaiting_cleanup',
    kind: 'deployment.teardown',
    by: "the provider's teardown report",
    async park(on, who) {
      const conn = await connect(on, who);
      const { operation, distribution } = await launch(on, who, {
        deployments: [{ ...sandbox({ cleanup: 'async' }), connection: conn.id }],
      });
      await until(on, who, operation.id, (op) => op.status === 'succeeded');
      const [teardown] = (await post(on, who, `${P}/connections/${conn.id}/revoke`)).teardowns;
      await until(on, who, teardown.id, waitingOn('awaiting_cleanup'));
      const [dep] = await deploymentsOf(on, who, distribution.id);
      return { id: teardown.id, clear: async () => void (await cleanup(on, dep.id)) };
    },
    settles: 'succeeded',
  },
  {
    reason: 'awaiting_deliveries',
    kind: 'webhook_endpoint.replay',
    by: 'its last delivery settling',
    async park(on, who) {
      const r = await replaying(on, who);
      return { id: r.id, clear: async () => r.release() };
    },
    settles: 'succeeded',
  },
  {
    reason: 'awaiting_target_settle',
    kind: 'webhook_endpoint.replay_cancel',
    by: 'its target settling (a replay awaiting deliveries, canceled)',
    async park(on, who) {
      const r = await replaying(on, who);
      return {
        id: r.id,
        clear: async () => {
          const cancel = (await post(on, who, `${P}/webhook_endpoints/${r.endpoint}/replay/cancel`)).operation;
          expect(await until(on, who, cancel.id, (op) => TERMINAL.includes(op.status))).toMatchObject({ status: 'succeeded' });
          r.release();
        },
      };
    },
    settles: 'canceled',
  },
  {
    reason: 'funding_required',
    kind: 'payout.run',
    by: 'a wallet top-up',
    async park(on, who) {
      const run = await payoutRun(on, who, false);
      await until(on, who, run.id, waitingOn('funding_required'));
      return { id: run.id, clear: async () => void (await post(on, null, `/operator/brands/${who.brand}/wallet/top_up`, { amount: 21 })) };
    },
    settles: 'succeeded',
  },
  {
    reason: 'provider_review',
    kind: 'payout.run',
    by: "the provider's decision time (the run's own timer)",
    async park(on, who) {
      const run = await heldRun(on, who);
      return { id: run.id, clear: async () => on.advance(REVIEW_MS) };
    },
    settles: 'succeeded',
  },
  {
    reason: 'awaiting_target_settle',
    kind: 'payout.run_cancel',
    by: 'its target settling (a run in review, canceled)',
    async park(on, who) {
      const run = await heldRun(on, who);
      const cancel = (await post(on, who, `${P}/payouts/runs/${run.id}/cancel`)).operation;
      await until(on, who, cancel.id, waitingOn('awaiting_target_settle'));
      return { id: cancel.id, clear: async () => on.advance(REVIEW_MS) };
    },
    settles: 'succeeded',
  },
];

const SCOPES = [...ALL_SCOPES, 'connections:read', 'connections:write', 'webhooks:read', 'webhooks:write', 'payouts:read', 'payouts:write'];

function table(topology: () => Topology, file: () => TestApp) {
  test.for(rows)('$reason ($kind) is woken by $by', async (row) => {
    const on = topology();
    const who = await tenant(file(), SCOPES);
    const { id, clear } = await row.park(on, who);
    await clear();
    expect(await until(on, who, id, (op) => TERMINAL.includes(op.status))).toMatchObject({ status: row.settles });
  });
}

let a: TestApp;
test.beforeAll(async ({ app }) => {
  a = app;
  rx = await startReceiver();
});
afterAll(() => {
  for (const release of held.splice(0)) release();
  return rx?.close();
});

describe('wake-ups: one process', () => {
  table(
    () => ({ http: a.http, operatorToken: a.operatorToken, worker: a.app, advance: (ms) => a.clock.advance(ms) }),
    () => a,
  );
});

describe.skipIf(!onPostgres())('wake-ups: across processes (requests through B, the operations worker in A)', () => {
  let b: RunningApp;
  test.beforeAll(async ({ app }) => {
    // Deliveries are attempted by B only: a replay's wake-up must cross from B's webhook worker to A's operations worker.
    await app.app.webhooks.stop();
    b = await startSecondApp(app, { ...operationsConfig({ worker: false, pollMs: HOUR, recheckMs: HOUR }), ...webhookConfig() });
    // One time on both (due times written by B are compared with A's clock when A claims).
    const ahead = b.clock.now().getTime() - app.clock.now().getTime();
    if (ahead > 0) app.clock.advance(ahead);
    else b.clock.advance(-ahead);
  });
  afterAll(() => b?.stop());
  table(
    () => ({
      http: b.http,
      operatorToken: a.operatorToken,
      worker: a.app,
      advance: (ms) => {
        a.clock.advance(ms);
        b.clock.advance(ms);
      },
    }),
    () => a,
  );
});
