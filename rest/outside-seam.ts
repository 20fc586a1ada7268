/**
 * Every REST route that is not an action of the registry (src/domain/registry.ts), by operationId, with the reason it
 * stays outside the seam. Every other documented route binds an action (rest/platform/bindings.ts);
 * test/platform/registry.test.ts fails on a route that is neither, and on an entry here that names no route. Koa
 * middleware that is not a documented route (/metrics, /docs, /console, GraphiQL) is not listed.
 */
const SURFACE_A = 'Surface A: its own spec, error envelope and buckets; a user token, not a Surface B caller';
const CONNECT = "Partner connect: a publishable key from a partner's browser, its own pipeline and CORS; not a platform token";
const PREFLIGHT = "Partner connect's CORS preflight: no credential, answers the allowed origins";
const TOKENS = 'Token management: a dashboard user token, at the dashboard base URL';
const OPERATOR = 'Operator interface: the operator token, across organizations';
const SERVICE = 'Service: no credential (health probes, the OpenAPI documents)';

export const OUTSIDE_THE_SEAM: Readonly<Record<string, string>> = {
  listScopes: SURFACE_A,
  executeScope: SURFACE_A,
  smokeTest: SURFACE_A,
  listUnits: SURFACE_A,
  createUnit: SURFACE_A,
  deleteUnit: SURFACE_A,
  exportPayouts: "A CSV stream, not an action's value: everything is refused before the first byte, then rows stream",
  connectJoin: CONNECT,
  connectStatus: CONNECT,
  connectAccount: CONNECT,
  connectPreflightJoin: PREFLIGHT,
  connectPreflightStatus: PREFLIGHT,
  connectPreflightConnect: PREFLIGHT,
  listPlatformTokens: TOKENS,
  createPlatformToken: TOKENS,
  revokePlatformToken: TOKENS,
  rotatePlatformToken: TOKENS,
  createOrganization: OPERATOR,
  listOrganizations: OPERATOR,
  retrieveOrganization: OPERATOR,
  getKillSwitch: OPERATOR,
  setKillSwitch: OPERATOR,
  appendTestEvent: OPERATOR,
  retrieveBrandWallet: OPERATOR,
  topUpBrandWallet: OPERATOR,
  decideSandboxReview: OPERATOR,
  settleSandboxCleanup: OPERATOR,
  listWebhookEndpointHealthEvents: OPERATOR,
  health: SERVICE,
  readiness: SERVICE,
  dashboardOpenApi: SERVICE,
  surfaceAOpenApi: SERVICE,
  surfaceBOpenApi: SERVICE,
};
