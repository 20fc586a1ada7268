-- The operations claim (src/domain/operation/engine.ts) walks the operations that
-- are due in run_after order. Through (status, run_after) it was a bitmap scan:
-- every status change of every operation leaves a dead entry there until a
-- vacuum, and a bitmap scan never marks one dead, so at 160 launches/s each
-- claim visited hundreds of heap pages (0.5 to 0.7 ms) to find nothing.
-- Two partial indexes in the claim's order, one per branch of the claim, are
-- walked by plain index scans: small (live operations only), read in order up
-- to the claim's limit, and the dead entries a scan meets are marked and
-- skipped from then on (test/db/operation-claim-plan.test.ts, both databases).
CREATE INDEX "operation_due_idx" ON "operation"("run_after", "id") WHERE "status" IN ('pending', 'waiting');
CREATE INDEX "operation_running_idx" ON "operation"("run_after", "id") WHERE "status" = 'running';
