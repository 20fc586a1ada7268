/** Kept for test/operator and test/operations (not yet on the kit): use ./errors.ts. */
export { expectErrorResponse } from './errors.ts';
