-- Why a webhook endpoint is disabled: 'manual' (its owner, through the API) or 'gone' (the receiver answered 410 Gone).
ALTER TABLE "webhook_endpoint" ADD COLUMN "disabled_reason" TEXT;
UPDATE "webhook_endpoint" SET "disabled_reason" = 'manual' WHERE "status" = 'disabled';
