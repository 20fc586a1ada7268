-- Performance measurements: append-only, exact (numeric), deduplicated by the caller's external_id within the organization.
CREATE TABLE "performance_measurement" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "entity_id" TEXT NOT NULL,
    "program_id" TEXT,
    "metric" TEXT NOT NULL,
    "value" DECIMAL(24,6) NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "external_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "performance_measurement_pkey" PRIMARY KEY ("id")
);
-- A repeated external_id is a duplicate (never counted twice).
CREATE UNIQUE INDEX "performance_measurement_organization_id_external_id_key" ON "performance_measurement"("organization_id", "external_id") WHERE "external_id" IS NOT NULL;
-- Standing reads one entity's metric over the current period.
CREATE INDEX "performance_measurement_entity_id_metric_occurred_at_idx" ON "performance_measurement"("entity_id", "metric", "occurred_at");
-- Rollups over the whole organization.
CREATE INDEX "performance_measurement_organization_id_metric_occurred_at_idx" ON "performance_measurement"("organization_id", "metric", "occurred_at");
-- The period metric requirements of a program sum over: day, week (ISO, from Monday) or month, in UTC.
ALTER TABLE "program" ADD COLUMN "performance_window" TEXT NOT NULL DEFAULT 'month';
