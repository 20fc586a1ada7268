import { afterAll, describe, expect } from 'vitest';
import { ALL_SCOPES } from '../../src/domain/scope/catalogue.ts';
import { appTest, buildOrg, buildToken, type HttpResponse, type TestApp, type TestOrg } from '../support/kit.ts';
import { buildConnectBrand, type ConnectBrand, expectSessionConfined, join, signHandoff } from '../support/connect.ts';
import { startReceiver, type Receiver } from '../webhook/receiver.ts';
import {
  MATRIX_CONFIG,
  expectConfined,
  expectCovers,
  graphqlProbes,
  type Ids,
  type Kind,
  mcpProbes,
  missingIds,
  openApiProbes,
  ownerState,
  seedObjects,
} from './id-matrix.ts';

/**
 * Brand confinement: inside one organization, a caller in another brand (its
 * `Service-Brand`, its publishable key's brand, its connect session's brand)
 * on a brand-owned object must learn nothing and change nothing, exactly as
 * another organization (cross-tenant.test.ts). Every REST route and GraphQL
 * field that names a brand-owned object answers, under brand `second`, what
 * the same request answers on a missing id of the same prefix (organization-
 * level objects in the same request keep their real ids), and neither brand's
 * view changes. Partner connect: a handoff signed by brand `main`'s issuer,
 * presented with `second`'s publishable key, is refused as a handoff from an
 * unknown issuer, redeems nothing, and still joins through `main`'s key.
 */

/** What a brand owns: reachable only with that brand selected. The rest of the kinds are the organization's. */
const BRAND_OWNED: ReadonlySet<Kind> = new Set<Kind>([
  'program',
  'requirement',
  'tier',
  'enrollment',
  'relationship',
  'connection',
  'issuer',
  'distribution',
  'deployment',
  'payout',
  'run',
  'entry',
]);

const test = appTest({ config: MATRIX_CONFIG });
let t: TestApp;
let rx: Receiver;
let org: TestOrg;
let token: string;
let ids: Ids;
const second = { 'service-brand': 'second' };

test.beforeAll(async ({ app }) => {
  t = app;
  rx = await startReceiver();
  org = await buildOrg(t);
  const sk = await buildToken(t, org, [...ALL_SCOPES]);
  token = sk.secret;
  ids = await seedObjects(t, org, token, sk.id, rx.url('/main'));
}, 180_000); // the seed (one object of every kind) outlasts the default hook timeout on a loaded machine
afterAll(async () => {
  await rx?.close();
});

/** Brand main's view of its objects and lists, and brand second's lists. */
const bothBrands = async () => ({
  main: await ownerState(t, { token, userToken: org.userToken }, ids),
  second: await ownerState(t, { token, userToken: org.userToken, headers: second }, ids, true),
});

/** Status and body with every request_id blanked: two refusals compared whole. */
const blank = (res: HttpResponse) => ({ status: res.status, body: res.text.replace(/"request_id":"[^"]*"/g, '"request_id":"<rid>"') });

describe('cross-brand matrix', () => {
  test("another brand of the organization on a brand's ids answers exactly as on missing ids, REST, GraphQL and MCP, and changes nothing", async () => {
    const outsider = { token, userToken: org.userToken, headers: second };
    const all = [...(await openApiProbes(t, outsider)), ...graphqlProbes(t, outsider), ...(await mcpProbes(t, outsider))];
    // The event feed and the operations are the organization's (every brand's subjects): their subject filters are not confined.
    const organizationLevel = ['graphql query events', 'graphql query operations'];
    const probes = all.filter((p) => p.kinds.some((k) => BRAND_OWNED.has(k)) && !organizationLevel.includes(p.name));
    expectCovers(probes, [
      'GET /v1/platform/programs/{id}',
      'programs/{id}/requirements/{requirement}',
      'programs/{id}/tiers/{tier}',
      'enrollments/{id}/approve',
      'POST /v1/platform/enrollments',
      'relationships/{id}/end',
      'connections/{id}/revoke',
      'handoff/issuers/{id}/rotate',
      'DELETE /v1/platform/handoff/issuers/{id}',
      'POST /v1/platform/connect_config',
      'GET /v1/platform/distributions/{id}',
      'distributions/{id}/cancel',
      'distributions/{id}/pause',
      'distributions/{id}/launch',
      'GET /v1/platform/deployments/{id}',
      'GET /v1/platform/deployments ?distribution',
      'payouts/{id}',
      'payouts/runs/{id}/cancel',
      'POST /v1/platform/payouts/runs',
      'payouts/ledger/{id}/reverse',
      'graphql query distribution',
      'graphql query deployment',
      'graphql mutation cancelDistribution',
      'graphql mutation rotateHandoffIssuer',
      'graphql mutation deleteHandoffIssuer',
      'graphql mutation endRelationship',
      'graphql mutation revokeConnection',
      'graphql mutation runPayouts',
      'graphql mutation cancelPayoutRun',
      'graphql mutation reverseLedgerEntry',
      'graphql mutation updateConnectConfig',
      'mcp programs_retrieve',
      'mcp distributions_cancel',
      'mcp enrollments_approve',
      'mcp deployments_retrieve',
    ]);
    // node(id:) answers null for whatever the type's own field cannot read: another brand's object as a missing one.
    // (A run's id is its operation's, and node(op_) is an operation: the organization's.)
    const node = (id: string) => t.http.graphql('query N($id: ID!) { node(id: $id) { id } }', { id }, { token, headers: second });
    const nodes = async () => {
      const leaks: string[] = [];
      for (const kind of [...BRAND_OWNED].filter((k) => k !== 'run')) {
        const [onOurs, onMissing] = [blank(await node(ids[kind])), blank(await node(missingIds(ids)[kind]))];
        if (JSON.stringify(onOurs) !== JSON.stringify(onMissing))
          leaks.push(`node(${kind})\n  ours: ${onOurs.body}\n  missing: ${onMissing.body}`);
      }
      return leaks;
    };
    await expectConfined(t, probes, ids, bothBrands, { vary: BRAND_OWNED, more: nodes });
  }, 240_000);
});

describe('partner connect across brands of one organization', () => {
  /** One organization, both brands set up for partner connect (each its program, origins, issuers and publishable key). */
  async function twoBrands(): Promise<{ main: ConnectBrand; second: ConnectBrand }> {
    const own = await buildOrg(t);
    const sk = (await buildToken(t, own, [...ALL_SCOPES])).secret;
    const main = await buildConnectBrand(t, { within: { org: own, sk } });
    return { main, second: await buildConnectBrand(t, { within: { org: own, sk }, brand: 'second' }) };
  }

  /** A brand's partner-facing state: its relationships, enrollments, connections, and the organization's entities. */
  const connectState = async (b: ConnectBrand, lists = ['relationships', 'enrollments', 'connections', 'entities']) => {
    const auth = { token: b.sk, headers: { 'service-brand': b.brandId } };
    const out: Record<string, unknown> = {};
    for (const p of lists) out[p] = (await t.http.get(`/v1/platform/${p}`, auth)).body.data;
    return out;
  };

  test("a handoff signed by another brand's issuer is refused as one from an unknown issuer, and its jti stays unspent", async () => {
    const { main, second: other } = await twoBrands();
    const before = { main: await connectState(main), other: await connectState(other) };
    const unknownIssuer = (id: string) => `${id.slice(0, -4)}${id.endsWith('0000') ? '1111' : '0000'}`;
    const signed = [
      // HS256 and EdDSA: main's issuers, and the same keys under an issuer id that names nothing.
      (iss: string, jti: string) => signHandoff(t, { alg: 'HS256', secret: main.hs.secret }, { iss, jti }),
      (iss: string, jti: string) => signHandoff(t, { alg: 'EdDSA', privateKey: main.ed.privateKey }, { iss, jti }),
    ];
    const issuers = [main.hs.id, main.ed.id];
    const handoffs: string[] = [];
    for (const [i, sign] of signed.entries()) {
      const jti = `cross-brand-${i}-${Date.now()}`;
      const handoff = await sign(issuers[i]!, jti);
      handoffs.push(handoff);
      const onOther = await join(t, other.pk, handoff);
      const onUnknown = await join(t, other.pk, await sign(unknownIssuer(issuers[i]!), jti));
      expect(onOther.status, onOther.text).toBe(400);
      expect(onOther.body.error.code).toBe('handoff_invalid');
      expect(blank(onOther)).toEqual(blank(onUnknown));
      // Presented again with the same key: the same refusal, not handoff_replayed.
      expect(blank(await join(t, other.pk, handoff))).toEqual(blank(onUnknown));
    }
    expect({ main: await connectState(main), other: await connectState(other) }).toEqual(before);
    // Nothing was redeemed: each handoff still joins through its own brand's key, into that brand's program.
    for (const handoff of handoffs) {
      const joined = await join(t, main.pk, handoff);
      expect(joined.status, joined.text).toBe(200);
      expect(joined.body.status.brand.id).toBe(main.brandId);
      expect(joined.body.status.enrollment.program).toBe(main.programId);
    }
    expect((await connectState(other)).enrollments).toEqual([]);
  });

  test("a connect session of one brand with another brand's key answers as a missing session, and changes nothing", async () => {
    const { main, second: other } = await twoBrands();
    // (The session's join creates its entity, the organization's: the brand's own lists are what must not change.)
    const brandLists = ['relationships', 'enrollments', 'connections'];
    const before = await connectState(other, brandLists);
    await expectSessionConfined(t, main, other);
    expect(await connectState(other, brandLists)).toEqual(before);
  });
});
