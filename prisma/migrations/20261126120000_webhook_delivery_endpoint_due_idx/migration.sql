-- Leasing (src/domain/webhook/lease.ts) now walks the endpoints with unfinished
-- deliveries (a loose index scan: one probe per endpoint) and takes each one's
-- oldest due rows, then shares the picks out by organization. Both read this
-- index; neither reads a backlog past the rows it takes, however many one
-- organization has due. It replaces the (next_attempt_at) index, which only the
-- old lease read.
CREATE INDEX "webhook_delivery_endpoint_due_idx" ON "webhook_delivery" ("endpoint_id", "next_attempt_at") WHERE "status" IN ('pending', 'failing');
DROP INDEX "webhook_delivery_due_idx";
