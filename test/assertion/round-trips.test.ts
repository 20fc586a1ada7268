import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, vi } from 'vitest';
import { appTest, onPostgres, type TestApp } from '../support/kit.ts';
import type { HttpResponse } from '../support/http.ts';
import { activeEnrollment, expectStatus, setup, standingEvents } from './helpers.ts';

/**
 * The assertion write is the write side's hot path (bench scenario 3). Its
 * database round trips are counted at the driver: every query the server
 * sends whose text or parameters name this request's subject, entity or key
 * (the server's background workers never do), and a bare COMMIT right after
 * one of those on the same connection. PostgreSQL only: PGlite runs
 * in-process, without round trips.
 */
const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

async function roundTrips(markers: (res: HttpResponse) => string[], fn: () => Promise<HttpResponse>): Promise<[HttpResponse, number]> {
  const spy = vi.spyOn(pg.Client.prototype, 'query');
  try {
    const res = await fn();
    const names = markers(res);
    const previousWasMine = new Map<unknown, boolean>();
    let n = 0;
    spy.mock.calls.forEach(([q, params], i) => {
      // A query config or a batch of the SQL port (its text is the batch's statements, its values all their values).
      const query = q as unknown as string | { text?: string; values?: unknown[] };
      const text = typeof query === 'string' ? query : (query.text ?? JSON.stringify(query));
      const values = params ?? (typeof query === 'string' ? null : query.values);
      const client = spy.mock.contexts[i];
      const mine =
        names.some((m) => text.includes(m) || JSON.stringify(values ?? null).includes(m)) ||
        (previousWasMine.get(client) === true && text.trim() === 'COMMIT');
      if (mine) n++;
      previousWasMine.set(client, mine);
    });
    return [res, n];
  } finally {
    spy.mockRestore();
  }
}

describe.skipIf(!onPostgres())('Assertion write round trips', () => {
  test('a claim change that moves an enrollment takes two round trips: the reads under the entity lock, then the writes with the commit', async () => {
    const { api } = await setup(t);
    const { enrollment, entity, subject } = await activeEnrollment(api, { grace: 0 });
    const [res, n] = await roundTrips(
      () => [entity],
      () => api.assert({ ...subject, key: 'verified', value: true }),
    );
    expectStatus(res, 201);
    expect(n).toBe(2);
    expect((await standingEvents(api, enrollment.id)).map((e) => e.type)).toEqual(['enrollment.qualified']);
  });

  test('first use of an external pair, an unchanged repeat and a revoke take two round trips each', async () => {
    const { api } = await setup(t);
    const subject = { external_user_id: `u-${randomUUID()}`, issuer: 'https://idp.example' };
    const marker = (res: HttpResponse) => [subject.external_user_id, res.body.entity ?? res.body.assertion.entity];
    const [created, n1] = await roundTrips(marker, () => api.assert({ ...subject, key: 'verified' }));
    expectStatus(created, 201);
    const [same, n2] = await roundTrips(marker, () => api.assert({ ...subject, key: 'verified' }));
    expectStatus(same, 200);
    const [revoked, n3] = await roundTrips(marker, () => api.revoke({ ...subject, key: 'verified' }));
    expectStatus(revoked, 201);
    expect([n1, n2, n3]).toEqual([2, 2, 2]);
  });

  test('an Idempotency-Key adds no round trip; a replay is the refused insert of the key, then the lookup of its answer', async () => {
    const { api } = await setup(t);
    const subject = { external_user_id: `u-${randomUUID()}`, issuer: 'https://idp.example' };
    const key = `k-${randomUUID()}`;
    const [first, n1] = await roundTrips(
      (res) => [subject.external_user_id, key, res.body.entity],
      () => api.assert({ ...subject, key: 'verified' }, { 'Idempotency-Key': key }),
    );
    const [again, n2] = await roundTrips(
      (res) => [subject.external_user_id, key, res.body.entity],
      () => api.assert({ ...subject, key: 'verified' }, { 'Idempotency-Key': key }),
    );
    expect(expectStatus(again, 201)).toEqual(expectStatus(first, 201));
    expect([n1, n2]).toEqual([2, 2]);
  });
});
