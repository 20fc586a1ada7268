-- CreateTable
CREATE TABLE "operation" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "brand_id" TEXT,
    "subject_type" TEXT NOT NULL,
    "subject_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "plane" TEXT NOT NULL DEFAULT 'mutation',
    "status" TEXT NOT NULL DEFAULT 'pending',
    "waiting_reason" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL DEFAULT 5,
    "error" JSONB,
    "result" JSONB NOT NULL DEFAULT '{}',
    "progress" JSONB NOT NULL DEFAULT '{}',
    "target_operation_id" TEXT,
    "parent_operation_id" TEXT,
    "cancel_requested_by" TEXT,
    "run_after" TIMESTAMPTZ(3) NOT NULL,
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "livemode" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "operation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "distribution" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "brand_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "budget" BIGINT NOT NULL,
    "reserved" BIGINT NOT NULL DEFAULT 0,
    "spent" BIGINT NOT NULL DEFAULT 0,
    "paused_from" TEXT,
    "livemode" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "distribution_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "deployment" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "distribution_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "config" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "provider_state" JSONB NOT NULL DEFAULT '{}',
    "livemode" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "deployment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "brand_wallet" (
    "brand_id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "balance" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "brand_wallet_pkey" PRIMARY KEY ("brand_id")
);

-- CreateTable
CREATE TABLE "wallet_movement" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "brand_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "distribution_id" TEXT,
    "operation_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallet_movement_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "operation_organization_id_id_idx" ON "operation"("organization_id", "id");

-- CreateIndex
CREATE INDEX "operation_organization_id_subject_type_subject_id_id_idx" ON "operation"("organization_id", "subject_type", "subject_id", "id");

-- CreateIndex
CREATE INDEX "operation_parent_operation_id_idx" ON "operation"("parent_operation_id");

-- CreateIndex
CREATE INDEX "operation_target_operation_id_idx" ON "operation"("target_operation_id");

-- CreateIndex
CREATE INDEX "operation_status_run_after_idx" ON "operation"("status", "run_after");

-- CreateIndex
CREATE INDEX "distribution_organization_id_brand_id_id_idx" ON "distribution"("organization_id", "brand_id", "id");

-- CreateIndex
CREATE INDEX "deployment_distribution_id_id_idx" ON "deployment"("distribution_id", "id");

-- CreateIndex
CREATE INDEX "deployment_organization_id_id_idx" ON "deployment"("organization_id", "id");

-- CreateIndex
CREATE INDEX "wallet_movement_brand_id_id_idx" ON "wallet_movement"("brand_id", "id");

-- One live operation per subject and plane, enforced by the database: a
-- second concurrent launch fails on this index instead of racing a read.
-- Cancels run on the control plane, so a cancel may coexist with its target.
CREATE UNIQUE INDEX "operation_one_live_per_subject" ON "operation" ("subject_type", "subject_id", "plane") WHERE "status" IN ('pending', 'running', 'waiting');
