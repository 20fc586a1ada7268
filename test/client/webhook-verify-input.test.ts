import { describe, expect, it } from 'vitest';
import { PlatformError, webhooks } from '../../packages/client/src/index.ts';

/** `webhooks.verify` called from plain JavaScript with the wrong things: a PlatformError with a hint, never a raw Node error. */
const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'assertion.created', data: {}, created_at: '2026-01-01T00:00:00Z' });

async function refusal(run: () => Promise<unknown>): Promise<PlatformError> {
  const e = await run().then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(PlatformError);
  return e as PlatformError;
}

describe('webhooks.verify refuses what it cannot verify', () => {
  it('a parsed object instead of the raw body: webhook_payload_invalid, with the fix in the message', async () => {
    const headers = await webhooks.sign(body, secret);
    const e = await refusal(() => webhooks.verify(JSON.parse(body) as never, headers, secret));
    expect(e.code).toBe('webhook_payload_invalid');
    expect(e.message).toContain('raw request body');
    expect(e.message).toContain('parsed object');
  });

  it.for([null, undefined, 42])('%s as the payload: webhook_payload_invalid', async (payload) => {
    const headers = await webhooks.sign(body, secret);
    expect((await refusal(() => webhooks.verify(payload as never, headers, secret))).code).toBe('webhook_payload_invalid');
  });

  it('no secret, or no headers object: their own codes', async () => {
    const headers = await webhooks.sign(body, secret);
    expect((await refusal(() => webhooks.verify(body, headers, undefined as never))).code).toBe('webhook_secret_invalid');
    expect((await refusal(() => webhooks.verify(body, undefined as never, secret))).code).toBe('webhook_headers_missing');
  });

  it('the raw body as a string or as bytes still verifies', async () => {
    const headers = await webhooks.sign(body, secret);
    expect((await webhooks.verify(body, headers, secret)).id).toBe('evt_1');
    expect((await webhooks.verify(Buffer.from(body), headers, secret)).id).toBe('evt_1');
  });
});
