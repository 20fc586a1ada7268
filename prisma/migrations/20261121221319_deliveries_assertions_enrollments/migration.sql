-- CreateTable
CREATE TABLE "webhook_delivery" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL,
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_delivery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_attempt" (
    "id" TEXT NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "response_excerpt" TEXT,

    CONSTRAINT "webhook_attempt_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "entity" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "external_user_id" TEXT,
    "issuer" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "entity_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "assertion_event" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "entity_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "value" DOUBLE PRECISION,
    "expires_at" TIMESTAMPTZ(3),
    "effective_at" TIMESTAMPTZ(3) NOT NULL,
    "livemode" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "assertion_event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "assertion_claim" (
    "entity_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "present" BOOLEAN NOT NULL,
    "value" DOUBLE PRECISION,
    "expires_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "assertion_claim_pkey" PRIMARY KEY ("entity_id","key")
);

-- CreateTable
CREATE TABLE "program" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "brand_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "grace_period_seconds" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "program_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "program_requirement" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "program_id" TEXT NOT NULL,
    "metric" TEXT NOT NULL,
    "operator" TEXT NOT NULL,
    "threshold" DOUBLE PRECISION,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "program_requirement_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "enrollment" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "program_id" TEXT NOT NULL,
    "entity_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "standing" TEXT NOT NULL DEFAULT 'not_qualified',
    "grace_ends_at" TIMESTAMPTZ(3),
    "evaluation" JSONB,
    "evaluated_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "enrollment_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_delivery_status_next_attempt_at_idx" ON "webhook_delivery"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_delivery_endpoint_id_created_at_idx" ON "webhook_delivery"("endpoint_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_delivery_endpoint_id_event_id_key" ON "webhook_delivery"("endpoint_id", "event_id");

-- CreateIndex
CREATE INDEX "webhook_attempt_delivery_id_number_idx" ON "webhook_attempt"("delivery_id", "number");

-- CreateIndex
CREATE INDEX "entity_organization_id_idx" ON "entity"("organization_id");

-- CreateIndex
CREATE UNIQUE INDEX "entity_organization_id_issuer_external_user_id_key" ON "entity"("organization_id", "issuer", "external_user_id");

-- CreateIndex
CREATE INDEX "assertion_event_organization_id_entity_id_key_created_at_idx" ON "assertion_event"("organization_id", "entity_id", "key", "created_at");

-- CreateIndex
CREATE INDEX "assertion_claim_organization_id_entity_id_idx" ON "assertion_claim"("organization_id", "entity_id");

-- CreateIndex
CREATE INDEX "assertion_claim_expires_at_idx" ON "assertion_claim"("expires_at");

-- CreateIndex
CREATE INDEX "program_organization_id_brand_id_created_at_idx" ON "program"("organization_id", "brand_id", "created_at");

-- CreateIndex
CREATE INDEX "program_requirement_program_id_idx" ON "program_requirement"("program_id");

-- CreateIndex
CREATE INDEX "enrollment_organization_id_entity_id_idx" ON "enrollment"("organization_id", "entity_id");

-- CreateIndex
CREATE INDEX "enrollment_standing_grace_ends_at_idx" ON "enrollment"("standing", "grace_ends_at");

-- CreateIndex
CREATE UNIQUE INDEX "enrollment_program_id_entity_id_key" ON "enrollment"("program_id", "entity_id");

-- AddForeignKey
ALTER TABLE "webhook_delivery" ADD CONSTRAINT "webhook_delivery_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_attempt" ADD CONSTRAINT "webhook_attempt_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_delivery"("id") ON DELETE CASCADE ON UPDATE CASCADE;
