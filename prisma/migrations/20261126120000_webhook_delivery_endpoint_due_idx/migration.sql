-- Leasing (src/domain/webhook/lease.ts) walks the endpoints with unfinished
-- deliveries (a loose index scan: one probe per endpoint), takes the oldest due
-- rows of each up to its free slots, then shares the picks out by organization.
-- Both steps read this index, and neither reads a backlog past the rows it
-- takes. It replaces the (next_attempt_at) index, which only the old lease read.
CREATE INDEX "webhook_delivery_endpoint_due_idx" ON "webhook_delivery" ("endpoint_id", "next_attempt_at") WHERE "status" IN ('pending', 'failing');
DROP INDEX "webhook_delivery_due_idx";
