-- A program's tier ladder: a tier is reached when the sum of its metric over the program's current period meets its threshold.
CREATE TABLE "program_tier" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "program_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "metric" TEXT NOT NULL,
    "threshold" DECIMAL(24,6) NOT NULL,
    "rate_bps" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "program_tier_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "program_tier_program_id_metric_threshold_key" ON "program_tier"("program_id", "metric", "threshold");
-- Every ladder change moves the version: a running retier that sees a newer one starts over.
ALTER TABLE "program" ADD COLUMN "tier_version" INTEGER NOT NULL DEFAULT 0;
-- The enrollment's current tier (null: none reached), as its last evaluation found it.
ALTER TABLE "enrollment" ADD COLUMN "tier" JSONB;
