-- Publishable keys (pk_live_) are platform tokens of kind 'publishable', bound to one brand and holding no scopes.
ALTER TABLE "platform_token" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'secret';
ALTER TABLE "platform_token" ADD COLUMN "brand_id" TEXT;

-- A redeemed handoff: (issuer, jti) is single use. Rows may be pruned once expires_at has passed (the token no longer verifies).
CREATE TABLE "handoff_redemption" (
    "issuer_id" TEXT NOT NULL,
    "jti" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "handoff_redemption_pkey" PRIMARY KEY ("issuer_id", "jti")
);
CREATE INDEX "handoff_redemption_expires_at_idx" ON "handoff_redemption"("expires_at");

-- A connect session (cs_...): the hash of its secret, bound to the publishable key, the brand and the entity, 30 minutes.
CREATE TABLE "connect_session" (
    "id" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "brand_id" TEXT NOT NULL,
    "entity_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "connect_session_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "connect_session_token_hash_key" ON "connect_session"("token_hash");
CREATE INDEX "connect_session_key_id_idx" ON "connect_session"("key_id");
CREATE INDEX "connect_session_expires_at_idx" ON "connect_session"("expires_at");
