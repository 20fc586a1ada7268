-- Events are inserted with seq and position NULL and numbered once, after
-- commit, by the sequencer (ADR 0005). Every index that holds seq or position
-- becomes partial on the number being set: the writer's INSERT then maintains
-- only the primary key and the sequencer's work queue (event_unsequenced_idx),
-- and the sequencer's UPDATE (non-HOT: it sets indexed columns) adds each
-- event to these indexes once instead of a second time. Every query that
-- uses them compares seq or position with a strict operator (`seq > $n`,
-- `max(seq)`, `position > $n`), which implies IS NOT NULL, so the planner
-- keeps choosing them (test/db/partial-event-indexes.test.ts, both databases).

DROP INDEX "event_position_key";
CREATE UNIQUE INDEX "event_position_key" ON "event"("position") WHERE "position" IS NOT NULL;

DROP INDEX "event_organization_id_seq_key";
CREATE UNIQUE INDEX "event_organization_id_seq_key" ON "event"("organization_id", "seq") WHERE "seq" IS NOT NULL;

DROP INDEX "event_organization_id_type_seq_idx";
CREATE INDEX "event_organization_id_type_seq_idx" ON "event"("organization_id", "type", "seq") WHERE "seq" IS NOT NULL;

DROP INDEX "event_organization_id_brand_id_seq_idx";
CREATE INDEX "event_organization_id_brand_id_seq_idx" ON "event"("organization_id", "brand_id", "seq") WHERE "brand_id" IS NOT NULL AND "seq" IS NOT NULL;

DROP INDEX "event_organization_id_subject_type_seq_idx";
CREATE INDEX "event_organization_id_subject_type_seq_idx" ON "event"("organization_id", "subject_type", "seq") WHERE "seq" IS NOT NULL;

DROP INDEX "event_organization_id_subject_id_seq_idx";
CREATE INDEX "event_organization_id_subject_id_seq_idx" ON "event"("organization_id", "subject_id", "seq") WHERE "seq" IS NOT NULL;
