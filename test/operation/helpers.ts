import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { App } from '../../src/app.ts';
import type { OperationsConfig } from '../../src/config.ts';
import type { BatchSend } from '../../src/db/sql-port.ts';
import { buildTenant, feedEvents, type TestApp } from '../support/kit.ts';

/** Fixtures for the operations engine tests: a tenant with distribution scopes, launches, the worker, money. */
export const ALL_SCOPES = ['distributions:read', 'distributions:write', 'distributions:launch', 'deployments:read', 'events:read'];

/**
 * The operations configuration of these tests: the worker off (tests drain it)
 * and a one-second poll, unless `over` says otherwise.
 */
export const operationsConfig = (over: Partial<OperationsConfig> = {}): { operations: OperationsConfig } => ({
  operations: {
    worker: false,
    pollMs: 1000,
    leaseMs: 30_000,
    recheckMs: 60_000,
    retryBaseMs: 1000,
    retryMaxMs: 60_000,
    maxAttempts: 3,
    ...over,
  },
});

export interface Tenant {
  token: string;
  brand: string;
  orgId: string;
}

export async function tenant(t: TestApp, scopes = ALL_SCOPES): Promise<Tenant> {
  const { org, token } = await buildTenant(t, scopes);
  return { token, brand: org.brands[0]!.id, orgId: org.id };
}

export const sandbox = (config: Record<string, unknown> = {}) => ({ provider: 'sandbox', config });

export async function topUp(t: TestApp, brand: string, amount: number) {
  const res = await t.http.post(`/operator/brands/${brand}/wallet/top_up`, { amount }, { token: t.operatorToken });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** POST /distributions; asserts 202 and returns { operation, distribution }. */
export async function launch(
  t: TestApp,
  who: Tenant,
  body: { name?: string; budget?: number; deployments: unknown[] },
  key = randomUUID(),
) {
  const res = await t.http.post(
    '/v1/platform/distributions',
    { name: 'Spring', budget: 0, ...body },
    { token: who.token, headers: { 'idempotency-key': key } },
  );
  expect(res.status, res.text).toBe(202);
  return res.body as { operation: any; distribution: any };
}

export async function verb(t: TestApp, who: Tenant, id: string, name: 'launch' | 'pause' | 'resume' | 'cancel', key = randomUUID()) {
  return t.http.post(`/v1/platform/distributions/${id}/${name}`, undefined, { token: who.token, headers: { 'idempotency-key': key } });
}

export async function op(t: TestApp, who: Tenant, id: string) {
  const res = await t.http.get(`/v1/platform/operations/${id}`, { token: who.token });
  expect(res.status, res.text).toBe(200);
  return res.body.operation;
}

export async function dist(t: TestApp, who: Tenant, id: string) {
  const res = await t.http.get(`/v1/platform/distributions/${id}`, { token: who.token });
  expect(res.status, res.text).toBe(200);
  return res.body.distribution;
}

export async function deployments(t: TestApp, who: Tenant, distribution: string) {
  const res = await t.http.get(`/v1/platform/deployments?distribution=${distribution}`, { token: who.token });
  expect(res.status, res.text).toBe(200);
  return (res.body.data as any[]).slice().reverse();
}

/** Every event of the tenant's feed, after sequencing. */
export const events = (t: TestApp, who: Tenant): Promise<any[]> => feedEvents(t, who.token);

export const typesOf = (evts: any[], subjectId?: string) => evts.filter((e) => !subjectId || e.subject.id === subjectId).map((e) => e.type);

export const drain = (t: TestApp) => t.app.operations.drain();

const TERMINAL = ['succeeded', 'partial', 'failed', 'canceled'];
/** Bound on one operation settling: generous for a loaded machine (a launch takes well under a second on a quiet one). */
export const SETTLE_BOUND_MS = 30_000;

/**
 * Reads the operation (through `reader`'s HTTP API) each time `worker`'s
 * process reports a change to it, until terminal; fails after SETTLE_BOUND_MS.
 */
export async function settled(reader: TestApp, who: Tenant, id: string, worker: App = reader.app) {
  const deadline = Date.now() + SETTLE_BOUND_MS;
  for (;;) {
    const stop = new AbortController();
    const changed = worker.operations.nextChange(id, Math.max(0, deadline - Date.now()), stop.signal);
    const row = await op(reader, who, id);
    if (TERMINAL.includes(row.status)) {
      stop.abort();
      return row;
    }
    if (Date.now() >= deadline) throw new Error(`operation ${id} still ${row.status} after ${SETTLE_BOUND_MS} ms`);
    await changed;
  }
}

/** Counts, while `fn` runs, named reads by statement name and the batches of every port transaction that carries a lease fence. */
export async function counting<T>(t: TestApp, fn: () => Promise<T>) {
  const sql = t.app.deps.db.sql;
  const { rows, transaction } = sql;
  const reads = new Map<string, number>();
  let fencedBatches = 0;
  let claimed = 0;
  sql.rows = async (s, params) => {
    const found = await rows(s, params);
    reads.set(s.name, (reads.get(s.name) ?? 0) + 1);
    if (s.name === 'operations_claim') claimed += found.length;
    return found;
  };
  sql.transaction = (body) =>
    transaction((send) => {
      let sends = 0;
      let fenced = false;
      const counted: BatchSend = async (statements, opts) => {
        sends++;
        if (statements.some((s) => s.text.includes('o.lease_owner = '))) fenced = true;
        try {
          return await send(statements, opts);
        } finally {
          if (fenced && (opts?.commit || sends > 1)) {
            fencedBatches += sends;
            sends = 0;
            fenced = false;
          }
        }
      };
      return body(counted);
    });
  try {
    const out = await fn();
    return { out, reads, fencedBatches: () => fencedBatches, claimed: () => claimed };
  } finally {
    sql.rows = rows;
    sql.transaction = transaction;
  }
}
