-- Replay (issue 16): a replayed event is delivered again as a new delivery row carrying the replay operation id,
-- with its own attempts and schedule, and the original delivery and its attempt log stay as they were. One
-- (endpoint, event) delivery outside replays stays the rule, and one per event within a replay.
ALTER TABLE "webhook_delivery" ADD COLUMN "replay_operation_id" TEXT;
DROP INDEX "webhook_delivery_endpoint_id_event_id_key";
CREATE UNIQUE INDEX "webhook_delivery_endpoint_id_event_id_key" ON "webhook_delivery" ("endpoint_id", "event_id") WHERE "replay_operation_id" IS NULL;
CREATE UNIQUE INDEX "webhook_delivery_replay_operation_id_event_id_key" ON "webhook_delivery" ("replay_operation_id", "event_id") WHERE "replay_operation_id" IS NOT NULL;
-- only_failed looks up every delivery of an endpoint for a batch of events, replays included.
CREATE INDEX "webhook_delivery_endpoint_id_event_id_idx" ON "webhook_delivery" ("endpoint_id", "event_id");
-- A replay bounded by time (since, until) finds its first and last seq through this index.
CREATE INDEX "event_organization_id_created_at_idx" ON "event" ("organization_id", "created_at") WHERE "seq" IS NOT NULL;
