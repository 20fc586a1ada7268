-- CreateTable
CREATE TABLE "webhook_endpoint_health_event" (
    "id" TEXT NOT NULL,
    "organization_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhook_endpoint_health_event_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "webhook_endpoint_health_event_endpoint_id_id_idx" ON "webhook_endpoint_health_event"("endpoint_id", "id");

-- AddForeignKey
ALTER TABLE "webhook_endpoint_health_event" ADD CONSTRAINT "webhook_endpoint_health_event_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;
