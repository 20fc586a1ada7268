-- An entity's account at a provider and what it granted, in one brand: active, then revoked (final).
CREATE TABLE "connection" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "brand_id" TEXT NOT NULL,
    "entity_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "grants" JSONB NOT NULL DEFAULT '[]',
    "status" TEXT NOT NULL DEFAULT 'active',
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "connection_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "connection_organization_id_brand_id_id_idx" ON "connection"("organization_id", "brand_id", "id");
-- At most one live (not revoked) connection per brand, entity, provider and account: a second is refused, a new one may follow a revoked one.
CREATE UNIQUE INDEX "connection_live_account_key" ON "connection"("brand_id", "entity_id", "provider", "account_id") WHERE "status" = 'active';
-- A deployment may place through one of its brand's connections.
ALTER TABLE "deployment" ADD COLUMN "connection_id" TEXT;
CREATE INDEX "deployment_connection_id_idx" ON "deployment"("connection_id");
