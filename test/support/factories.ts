/** Kept for suites not yet on the kit (test/operations*, test/assertions): use ./tenant.ts. */
export { buildOrg, buildToken, buildTenant as buildOrgWithToken, type TestOrg } from './tenant.ts';
