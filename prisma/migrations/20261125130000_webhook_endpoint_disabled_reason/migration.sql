-- Why a webhook endpoint is disabled: 'manual' (its owner, through the API), 'gone' (the receiver answered 410 Gone) or 'failing'.
ALTER TABLE "webhook_endpoint" ADD COLUMN "disabled_reason" TEXT;
UPDATE "webhook_endpoint" SET "disabled_reason" = 'manual' WHERE "status" = 'disabled';
-- Since when every attempt to the endpoint has failed (null after a success), and past WEBHOOK_DISABLE_FAILING_AFTER it is disabled ('failing').
ALTER TABLE "webhook_endpoint" ADD COLUMN "failing_since" TIMESTAMPTZ(3);
