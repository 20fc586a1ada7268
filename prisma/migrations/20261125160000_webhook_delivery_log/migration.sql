-- A queryable delivery log (issue 16). The event type is kept on the delivery, so a type filter walks an index
-- instead of joining every event. Existing rows are backfilled from their event.
ALTER TABLE "webhook_delivery" ADD COLUMN "event_type" TEXT;
UPDATE "webhook_delivery" d SET "event_type" = e."type" FROM "event" e WHERE e."id" = d."event_id";
-- An endpoint's log, newest first, by status or by type (ids are time-ordered).
CREATE INDEX "webhook_delivery_endpoint_id_status_id_idx" ON "webhook_delivery" ("endpoint_id", "status", "id");
CREATE INDEX "webhook_delivery_endpoint_id_event_type_id_idx" ON "webhook_delivery" ("endpoint_id", "event_type", "id");
CREATE INDEX "webhook_delivery_endpoint_id_id_idx" ON "webhook_delivery" ("endpoint_id", "id");
-- One event's deliveries across endpoints.
CREATE INDEX "webhook_delivery_event_id_idx" ON "webhook_delivery" ("event_id");
-- Retention prunes attempts by age, oldest first.
CREATE INDEX "webhook_attempt_started_at_idx" ON "webhook_attempt" ("started_at");
