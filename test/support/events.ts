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
