import { afterAll, describe } from 'vitest';
import { ALL_SCOPES } from '../../src/domain/scope/catalogue.ts';
import { appTest, buildOrg, buildToken, type TestApp, type TestOrg } from '../support/kit.ts';
import { buildConnectBrand, expectSessionConfined } from '../support/connect.ts';
import { startReceiver, type Receiver } from '../webhook/receiver.ts';
import {
  MATRIX_CONFIG,
  expectConfined,
  expectCovers,
  graphqlProbes,
  type Ids,
  mcpProbes,
  openApiProbes,
  ownerState,
  seedObjects,
} from './id-matrix.ts';

/**
 * Another organization's credentials on our ids must learn nothing and change
 * nothing: every request answers exactly as the same request on a missing id
 * of the same prefix (status and body, ids and request_id aside), and our own
 * view of every object is the same before and after. The probes come from the
 * OpenAPI documents and the GraphQL schema (id-matrix.ts), so a new route or
 * field that takes an id is tried without editing this file.
 */

const test = appTest({ config: MATRIX_CONFIG });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let rx: Receiver;
let ours: { org: TestOrg; token: string; ids: Ids };
let other: { org: TestOrg; token: string };

test.beforeAll(async ({ app }) => {
  t = app;
  rx = await startReceiver();
  const org = await buildOrg(t);
  const { secret: token, id: tokenId } = await buildToken(t, org, [...ALL_SCOPES]);
  const otherOrg = await buildOrg(t);
  other = { org: otherOrg, token: (await buildToken(t, otherOrg, [...ALL_SCOPES])).secret };
  ours = { org, token, ids: await seedObjects(t, org, token, tokenId, rx.url('/ours')) };
}, 180_000); // the seed (one object of every kind) outlasts the default hook timeout on a loaded machine
afterAll(async () => {
  await rx?.close();
});

const ourState = () => ownerState(t, { token: ours.token, userToken: ours.org.userToken }, ours.ids);

describe('cross-tenant matrix', () => {
  test('another organization on our ids answers exactly as on missing ids, REST, GraphQL and MCP, and changes nothing of ours', async () => {
    const outsider = { token: other.token, userToken: other.org.userToken };
    const probes = [...(await openApiProbes(t, outsider)), ...graphqlProbes(t, outsider), ...(await mcpProbes(t, outsider))];
    // Every object route of the brief is in the matrix.
    expectCovers(probes, [
      'webhook_endpoints/{id}',
      'event_destinations/{id}',
      'event_destinations/{id}/rotate_secret',
      'graphql query eventDestination',
      'mcp event_destinations_update',
      'deliveries/{delivery_id}/retry',
      'assertions/{id}',
      'assertions/revoke',
      'operations/{id}',
      'distributions/{id}/cancel',
      'programs/{id}/requirements/{requirement}',
      'enrollments/{id}/approve',
      'deployments/{id}',
      'units/delete',
      'tokens/rotate',
      'graphql query event',
      'graphql mutation retryWebhookDelivery',
      'graphql mutation deleteUnit',
      'brands/{id}',
      'entities/{id}',
      'relationships/{id}/end',
      'graphql mutation endRelationship',
      'graphql query entity',
      'payouts/{id}',
      'payouts/runs/{id}/cancel',
      'graphql mutation runPayouts',
      'payouts/ledger/{id}/reverse',
      'graphql mutation reverseLedgerEntry',
      'connections/{id}/revoke',
      'graphql mutation revokeConnection',
      'handoff/issuers/{id}/rotate',
      'graphql mutation deleteHandoffIssuer',
      'platform/tokens/create',
      'mcp webhook_endpoints_update',
      'mcp webhook_deliveries_retry',
      'mcp operations_retrieve',
      'mcp distributions_cancel',
      'mcp programs_remove_requirement',
      'mcp enrollments_approve',
      'mcp assertions_create',
    ]);
    await expectConfined(t, probes, ours.ids, ourState);
  }, 240_000);

  test('partner connect: another organization’s publishable key on our connect session answers exactly as on a missing one, and changes nothing', async () => {
    await expectSessionConfined(t, await buildConnectBrand(t), await buildConnectBrand(t));
  });
});
