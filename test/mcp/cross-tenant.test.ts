import { describe, expect } from 'vitest';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { connectMcp, toolError, toolValue } from './helpers.ts';

/**
 * Tool calls hold the REST matrices: another organization's objects do not
 * exist for a key (resource_missing, nothing changed), and the brand the
 * `Service-Brand` header selects answers as it does on REST.
 */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
const P = '/v1/platform';

describe('cross-tenant and cross-brand tool calls', () => {
  test("another organization's endpoint and program do not exist through MCP; nothing of them changes", async () => {
    const a = await buildTenant(t, ['webhooks:read', 'webhooks:write', 'programs:read', 'program_requirements:write']);
    const b = await buildTenant(t, ['webhooks:read', 'webhooks:write', 'programs:read', 'program_requirements:write']);
    const endpoint = (await t.http.post(`${P}/webhook_endpoints`, { url: 'https://a.example/h', description: 'a' }, { token: a.token }))
      .body.webhook_endpoint;
    const program = (await t.http.post(`${P}/programs`, { name: 'A' }, { token: a.token })).body;
    const agent = await connectMcp(t.origin, b.token);
    for (const call of [
      { name: 'webhook_endpoints_retrieve', arguments: { id: endpoint.id } },
      { name: 'webhook_endpoints_update', arguments: { id: endpoint.id, description: 'taken' } },
      { name: 'webhook_endpoints_rotate_secret', arguments: { id: endpoint.id } },
      { name: 'webhook_endpoints_delete', arguments: { id: endpoint.id } },
      { name: 'programs_retrieve', arguments: { id: program.id } },
      { name: 'programs_add_requirement', arguments: { id: program.id, metric: 'assert:verified', operator: 'exists' } },
    ]) {
      const err = toolError(await agent.callTool(call));
      expect([call.name, err.code]).toEqual([call.name, 'resource_missing']);
    }
    const after = (await t.http.get(`${P}/webhook_endpoints/${endpoint.id}`, { token: a.token })).body.webhook_endpoint;
    expect([after.description, after.rotated_at]).toEqual(['a', null]);
    expect((await t.http.get(`${P}/programs/${program.id}`, { token: a.token })).body.requirements).toEqual([]);
    await agent.close();
  });

  test('Service-Brand selects the brand as on REST: the same answers for the same brand', async () => {
    const { token } = await buildTenant(t, ['distributions:read', 'distributions:write', 'distributions:launch', 'org:read']);
    const body = { name: 'D', budget: 0, deployments: [{ provider: 'sandbox', config: {} }] };
    const second = (await t.http.post(`${P}/distributions`, body, { token, headers: { 'service-brand': 'second' } })).body.distribution;
    for (const brand of ['main', 'second']) {
      const agent = await connectMcp(t.origin, token, { headers: { 'service-brand': brand } });
      const viaMcp = await agent.callTool({ name: 'distributions_list', arguments: {} });
      const viaRest = await t.http.get(`${P}/distributions`, { token, headers: { 'service-brand': brand } });
      expect(toolValue(viaMcp)).toEqual(viaRest.body);
      expect(
        toolValue(viaMcp)
          .data.map((d: { id: string }) => d.id)
          .includes(second.id),
      ).toBe(brand === 'second');
      await agent.close();
    }
  });
});
