-- A brand's partner-connect configuration: the origins its publishable keys answer, the program a join enrolls in, what it requires, its look.
CREATE TABLE "connect_config" (
    "brand_id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "allowed_origins" JSONB NOT NULL DEFAULT '[]',
    "default_program_id" TEXT,
    "required_assertions" JSONB NOT NULL DEFAULT '[]',
    "display_name" TEXT,
    "primary_color" TEXT,
    "accent_color" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "connect_config_pkey" PRIMARY KEY ("brand_id")
);
