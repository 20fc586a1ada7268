import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { PlatformError, webhooks } from '../../packages/client/src/index.ts';

const secret = webhooks.generateSecret();
const previous = webhooks.generateSecret();
const event = {
  id: 'evt_01a2002e928871de99941cfad9ada567',
  object: 'event',
  type: 'enrollment.qualified',
  seq: 7,
  subject: { type: 'enrollment', id: 'enr_1' },
  data: { previous_status: 'grace', trigger: { kind: 'assertion' } },
  operation: null,
  livemode: true,
  created_at: '2026-11-21T22:16:21.896Z',
};
const body = JSON.stringify(event);

describe('webhooks.verify', () => {
  it('accepts a payload signed by the standardwebhooks package and returns the camelCased event (the feed shape)', async () => {
    const ts = new Date();
    const headers = {
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(ts.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(event.id, ts, body),
    };
    const verified = await webhooks.verify(body, headers, secret);
    expect(verified).toEqual({
      id: event.id,
      object: 'event',
      type: 'enrollment.qualified',
      seq: 7,
      subject: { type: 'enrollment', id: 'enr_1' },
      data: { previousStatus: 'grace', trigger: { kind: 'assertion' } },
      operation: null,
      livemode: true,
      createdAt: '2026-11-21T22:16:21.896Z',
    });
  });

  it('its signatures are accepted by the standardwebhooks package', async () => {
    const headers = await webhooks.sign(body, secret);
    expect(headers['webhook-id']).toBe(event.id);
    expect(new Webhook(secret).verify(body, headers)).toEqual(event);
  });

  it('accepts either of two v1 entries (current first, previous second, as during a rotation)', async () => {
    const ts = new Date();
    const current = new Webhook(secret).sign(event.id, ts, body);
    const old = new Webhook(previous).sign(event.id, ts, body);
    const headers = new Headers({
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(ts.getTime() / 1000)),
      'webhook-signature': `${current} ${old}`,
    });
    expect((await webhooks.verify(body, headers, secret)).id).toBe(event.id);
    expect((await webhooks.verify(body, headers, previous)).id).toBe(event.id);
    await expect(webhooks.verify(body, headers, webhooks.generateSecret())).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
  });

  it('rejects a tampered body, a stale or future timestamp, and missing headers', async () => {
    const headers = await webhooks.sign(body, secret);
    await expect(webhooks.verify(body.replace('grace', 'qualified'), headers, secret)).rejects.toMatchObject({
      code: 'webhook_signature_invalid',
    });

    const stale = await webhooks.sign(body, secret, { timestamp: new Date(Date.now() - 6 * 60_000) });
    const err = await webhooks.verify(body, stale, secret).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.code).toBe('webhook_timestamp_out_of_tolerance');
    expect(() => new Webhook(secret).verify(body, stale)).toThrow(); // the reference agrees
    const future = await webhooks.sign(body, secret, { timestamp: new Date(Date.now() + 6 * 60_000) });
    await expect(webhooks.verify(body, future, secret)).rejects.toMatchObject({ code: 'webhook_timestamp_out_of_tolerance' });
    const withinTolerance = await webhooks.sign(body, secret, { timestamp: new Date(Date.now() - 4 * 60_000) });
    expect((await webhooks.verify(body, withinTolerance, secret)).seq).toBe(7);

    await expect(webhooks.verify(body, { 'webhook-id': event.id }, secret)).rejects.toMatchObject({ code: 'webhook_headers_missing' });
  });

  it('accepts the raw body as bytes', async () => {
    const headers = await webhooks.sign(body, secret);
    expect((await webhooks.verify(new TextEncoder().encode(body), headers, secret)).id).toBe(event.id);
  });
});
