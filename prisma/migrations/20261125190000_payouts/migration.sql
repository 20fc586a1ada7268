-- The payout ledger (ADR 0009): what each enrollment earned per period, in integer minor units, append-only.
ALTER TABLE "enrollment" ADD COLUMN "accrued_until" TIMESTAMPTZ(3);

CREATE TABLE "ledger_entry" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "brand_id" TEXT NOT NULL,
    "program_id" TEXT NOT NULL,
    "enrollment_id" TEXT NOT NULL,
    "entity_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "source_period_start" TIMESTAMPTZ(3) NOT NULL,
    "qualified" BOOLEAN NOT NULL,
    "tier_id" TEXT,
    "metric" TEXT,
    "value" DECIMAL(24,6) NOT NULL,
    "rate_bps" INTEGER NOT NULL,
    "earned" DECIMAL(38,10) NOT NULL,
    "carry" DECIMAL(38,10) NOT NULL,
    "amount" BIGINT NOT NULL,
    "reverses_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ledger_entry_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "ledger_entry_organization_id_brand_id_period_end_idx" ON "ledger_entry"("organization_id", "brand_id", "period_end");
CREATE INDEX "ledger_entry_enrollment_id_source_period_start_idx" ON "ledger_entry"("enrollment_id", "source_period_start");
CREATE INDEX "ledger_entry_entity_id_idx" ON "ledger_entry"("entity_id");
-- One accrual per enrollment and period: a second accrual of the same period is refused, later changes are adjustments.
CREATE UNIQUE INDEX "ledger_entry_one_accrual" ON "ledger_entry"("enrollment_id", "source_period_start") WHERE "kind" = 'accrual';

-- Entries are never updated or deleted: any UPDATE or DELETE fails (the rules call a function whose cast fails at run time).
CREATE FUNCTION "ledger_entry_append_only"(entry TEXT) RETURNS INTEGER LANGUAGE sql AS $$ SELECT ('ledger_entry is append-only, reverse an entry with a compensating one: ' || entry)::int $$;
CREATE RULE "ledger_entry_no_update" AS ON UPDATE TO "ledger_entry" DO INSTEAD SELECT "ledger_entry_append_only"(OLD.id);
CREATE RULE "ledger_entry_no_delete" AS ON DELETE TO "ledger_entry" DO INSTEAD SELECT "ledger_entry_append_only"(OLD.id);

-- A payout run: one per (brand, program or all of the brand's, period_end), its operation answers every repeat.
CREATE TABLE "payout_run" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "brand_id" TEXT NOT NULL,
    "program_id" TEXT,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "operation_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payout_run_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "payout_run_scope_period_key" ON "payout_run"("brand_id", COALESCE("program_id", ''), "period_end");

-- One payout per entity and run: created, then settled or failed.
CREATE TABLE "payout" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "brand_id" TEXT NOT NULL,
    "program_id" TEXT,
    "run_id" TEXT NOT NULL,
    "operation_id" TEXT NOT NULL,
    "entity_id" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'created',
    "failure_reason" TEXT,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payout_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "payout_organization_id_brand_id_id_idx" ON "payout"("organization_id", "brand_id", "id");
CREATE INDEX "payout_run_id_status_idx" ON "payout"("run_id", "status");
CREATE UNIQUE INDEX "payout_run_id_entity_id_key" ON "payout"("run_id", "entity_id");

-- Which entries a payout pays: the link stays when the payout fails (its status then says the entries are unpaid again).
CREATE TABLE "payout_item" (
    "payout_id" TEXT NOT NULL,
    "entry_id" TEXT NOT NULL,
    CONSTRAINT "payout_item_pkey" PRIMARY KEY ("payout_id", "entry_id")
);
CREATE INDEX "payout_item_entry_id_idx" ON "payout_item"("entry_id");
