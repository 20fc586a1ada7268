-- 'subject': the lease sends deliveries of one subject to the endpoint one at a time, in seq order
-- (src/domain/webhook/lease.ts). 'none' (the default): in parallel, in any order.
ALTER TABLE "webhook_endpoint" ADD COLUMN "ordering" TEXT NOT NULL DEFAULT 'none';
