-- CreateTable
CREATE TABLE "mcp_session" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "token_id" TEXT NOT NULL,
    "protocol_version" TEXT NOT NULL,
    "log_level" TEXT,
    "subscriptions" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mcp_session_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "mcp_session_last_seen_at_idx" ON "mcp_session"("last_seen_at");
