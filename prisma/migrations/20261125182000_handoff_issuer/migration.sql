-- A brand's signed-handoff issuer: an HS256 secret or an EdDSA public key (JWK), the previous one kept for 24 h after a rotation.
CREATE TABLE "handoff_issuer" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "brand_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "algorithm" TEXT NOT NULL,
    "secret" TEXT,
    "public_key" JSONB,
    "previous_secret" TEXT,
    "previous_public_key" JSONB,
    "previous_expires_at" TIMESTAMPTZ(3),
    "rotated_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "handoff_issuer_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "handoff_issuer_organization_id_brand_id_id_idx" ON "handoff_issuer"("organization_id", "brand_id", "id");
