-- Leasing (src/domain/webhook/lease.ts) reads due deliveries in next_attempt_at
-- order. Indexing only unfinished rows keeps that an ordered scan that stops at
-- the LIMIT, however many succeeded or exhausted deliveries accumulate.
CREATE INDEX "webhook_delivery_due_idx" ON "webhook_delivery" ("next_attempt_at") WHERE "status" IN ('pending', 'failing');
