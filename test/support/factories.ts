/** Only for test/platform/action-parity.test.ts until it moves to the kit (./kit.ts: buildTenant); nothing else may import it. */
export { buildTenant as buildOrgWithToken } from './tenant.ts';
