-- An endpoint's own delivery policy (src/domain/webhook/policy.ts): timeout_ms, retry_schedule_ms, max_in_flight and
-- rate_limit_per_second. Null, or a key left out, means the deployment's setting.
ALTER TABLE "webhook_endpoint" ADD COLUMN "policy" JSONB;
