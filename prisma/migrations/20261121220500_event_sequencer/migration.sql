-- Event sequencing (see src/domain/event/sequencer.ts): events are inserted
-- with seq NULL inside the causing transaction, and one serialized sequencer
-- assigns seq from this sequence after commit, so seq order is visibility order.
CREATE SEQUENCE "event_seq_seq" AS BIGINT;

-- The sequencer's work queue: only unsequenced rows, found without a scan.
CREATE INDEX "event_unsequenced_idx" ON "event" ("id") WHERE "seq" IS NULL;
