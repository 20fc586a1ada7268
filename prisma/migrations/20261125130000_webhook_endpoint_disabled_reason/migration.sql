-- Why a webhook endpoint is disabled: 'manual' (its owner, through the API) or 'gone' (the receiver answered 410 Gone).
ALTER TABLE "webhook_endpoint" ADD COLUMN "disabled_reason" TEXT;
UPDATE "webhook_endpoint" SET "disabled_reason" = 'manual' WHERE "status" = 'disabled';
-- Since when every attempt to the endpoint has failed (null after a success); past WEBHOOK_DISABLE_FAILING_AFTER it is disabled ('failing').
ALTER TABLE "webhook_endpoint" ADD COLUMN "failing_since" TIMESTAMPTZ(3);
