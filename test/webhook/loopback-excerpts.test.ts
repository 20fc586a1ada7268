import { afterAll, beforeAll, describe, expect } from 'vitest';
import { appTest, buildTenant, emitEvent } from '../support/kit.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig, type Receiver } from './receiver.ts';

/** A server that delivers to loopback targets (WEBHOOK_ALLOW_LOOPBACK on); loopback-policy.test.ts holds the refusals. */
const test = appTest({ config: webhookConfig({ retryScheduleMs: [0], allowLoopback: true }) });
const WRITE = ['webhooks:read', 'webhooks:write'];

describe('response excerpts from loopback targets', () => {
  let rx: Receiver;
  beforeAll(async () => {
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
  });

  test('are shown only while loopback delivery is enabled', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    rx.on('/internal', (_req, res) => {
      res.statusCode = 500;
      res.end('internal service banner');
    });
    const ep = await createEndpoint(t, token, { url: rx.url('/internal') });
    await emitEvent(t, org.id);
    await settle(t);
    const excerpts = async () => {
      const r = (await listDeliveries(t, token, ep.id))[0].attempt_log.map((a: { response_excerpt: string | null }) => a.response_excerpt);
      const g = await t.http.graphql(
        `query($id: ID!) { webhookEndpoint(id: $id) { deliveries(first: 10) { edges { node { attemptLog { responseExcerpt } } } } } }`,
        { id: ep.id },
        { token },
      );
      expect(g.body.errors, g.text).toBeUndefined();
      return {
        rest: r,
        graphql: g.body.data.webhookEndpoint.deliveries.edges[0].node.attemptLog.map(
          (a: { responseExcerpt: string | null }) => a.responseExcerpt,
        ),
      };
    };
    expect(await excerpts()).toEqual({ rest: ['internal service banner'], graphql: ['internal service banner'] });
    // The operator turns loopback delivery off (a restart with WEBHOOK_ALLOW_LOOPBACK=0): what was recorded is no longer shown.
    t.app.deps.config.webhook.allowLoopback = false;
    try {
      expect(await excerpts()).toEqual({ rest: [null], graphql: [null] });
    } finally {
      t.app.deps.config.webhook.allowLoopback = true;
    }
  });
});
