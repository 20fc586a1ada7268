-- The endpoint of each attempt, copied from its delivery, so an endpoint's health summary
-- (src/domain/webhook/health.ts) reads its last day of attempts as one range of this index.
ALTER TABLE "webhook_attempt" ADD COLUMN "endpoint_id" TEXT;
UPDATE "webhook_attempt" a SET "endpoint_id" = d."endpoint_id" FROM "webhook_delivery" d WHERE d."id" = a."delivery_id";
ALTER TABLE "webhook_attempt" ALTER COLUMN "endpoint_id" SET NOT NULL;
CREATE INDEX "webhook_attempt_endpoint_id_started_at_idx" ON "webhook_attempt"("endpoint_id", "started_at");
