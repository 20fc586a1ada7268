import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest (the PGlite and PostgreSQL passes of `.ci/run`, 2026-11-28), started first. Without
 * this, a fresh clone (no results cached yet) orders files by size, and a small file that runs for two minutes can
 * start last and leave the other workers idle while it finishes. The rest follow vitest's own order (cached
 * durations, else size). A file missing from the list only runs in that order; a stale entry costs nothing.
 */
const SLOWEST = [
  'test/topology/failover.test.ts',
  'test/browser/console.test.ts',
  'test/client/cli.test.ts',
  'test/platform/action-parity.test.ts',
  'test/client/cli-commands.test.ts',
  'test/readme/docs-session.test.ts',
  'test/payout/exports.test.ts',
  'test/runtime/data-dir-lock.test.ts',
  'test/operation/crash-recovery.test.ts',
  'test/hardening/chaos.test.ts',
  'test/scale/processes.test.ts',
  'test/payout/export-memory.test.ts',
  'test/scale/n-machines.test.ts',
  'test/hardening/fuzz.test.ts',
  'test/package/client-package.test.ts',
  'test/cli/login.test.ts',
  'test/payout/runs.test.ts',
  'test/payout/crash.test.ts',
  'test/hardening/cross-brand.test.ts',
  'test/hardening/cross-tenant.test.ts',
  'test/hardening/page-load.test.ts',
  'test/operator/process.test.ts',
  'test/destination/transport-restart.test.ts',
  'test/topology/citus-report.test.ts',
];

export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const order = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOWEST.findIndex((path) => f.moduleId.endsWith(`/${path}`));
      return i < 0 ? SLOWEST.length : i;
    };
    const position = new Map(order.map((f, i) => [f, i]));
    return order.sort((a, b) => rank(a) - rank(b) || position.get(a)! - position.get(b)!);
  }
}
