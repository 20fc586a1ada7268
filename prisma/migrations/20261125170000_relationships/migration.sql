-- A durable relationship between a brand and an entity: created, active, paused, ended (final).
CREATE TABLE "relationship" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "brand_id" TEXT NOT NULL,
    "entity_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'created',
    "ended_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "relationship_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "relationship_organization_id_brand_id_entity_id_idx" ON "relationship"("organization_id", "brand_id", "entity_id");
-- At most one live (not ended) relationship per brand and entity: a second is refused, a new one may follow an ended one.
CREATE UNIQUE INDEX "relationship_live_brand_entity_key" ON "relationship"("brand_id", "entity_id") WHERE "status" <> 'ended';
