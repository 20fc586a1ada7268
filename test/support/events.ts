import { expect } from 'vitest';
import type { TestApp } from './app.ts';

/** Appends a public test event through the operator route and waits until it is sequenced. */
export async function emitEvent(t: TestApp, organizationId: string, type = 'assertion.created', data: Record<string, unknown> = {}) {
  const res = await t.http.post(
    '/operator/events',
    { organization_id: organizationId, type, subject: { type: 'entity', id: 'ent_1' }, data },
    { token: t.operatorToken },
  );
  expect(res.status, res.text).toBe(201);
  await t.app.sequencer.flush();
  return res.body.id as string;
}

/** Every event of `token`'s feed, after sequencing: pages through GET /v1/platform/events, `query` adding filters (`type=…`). */
export async function feedEvents(t: TestApp, token: string, query = ''): Promise<any[]> {
  await t.app.sequencer.flush();
  const out: any[] = [];
  let after = '';
  for (;;) {
    const res = await t.http.get(`/v1/platform/events?limit=100${query ? `&${query}` : ''}${after}`, { token });
    expect(res.status, res.text).toBe(200);
    out.push(...res.body.data);
    if (!res.body.has_more) return out;
    after = `&starting_after=${res.body.data.at(-1).seq}`;
  }
}
