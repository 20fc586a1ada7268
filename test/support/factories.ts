/** Kept for suites not yet on the kit (test/operations, test/operator, test/assertions, and the files still starting their app with startTestApp): new tests use ./kit.ts. */
export { buildOrg, buildToken, buildTenant as buildOrgWithToken, type TestOrg } from './tenant.ts';
