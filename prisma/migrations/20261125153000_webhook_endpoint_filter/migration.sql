-- An endpoint's filter beyond enabled_events (issue 16): {"brands": [brand ids], "subject_types": [...]}, either
-- list absent when not given, the column null when neither is. The feed's filter definition (src/domain/event/filter.ts).
ALTER TABLE "webhook_endpoint" ADD COLUMN "filter" JSONB;
