-- Per-organization seq (ADR 0005). `seq` becomes dense and gapless per
-- organization from now on: existing events keep their numbers, so stored
-- cursors stay valid and each organization continues from its own maximum.
-- `position` is the internal global order that cross-organization tailers
-- (webhook fan-out cursor, live stream, NOTIFY payloads) follow: existing rows
-- take their old global seq as position.

-- AlterTable
ALTER TABLE "event" ADD COLUMN     "position" BIGINT;

UPDATE "event" SET "position" = "seq" WHERE "seq" IS NOT NULL;

-- The sequence now draws positions: it already stands past every old seq.
ALTER SEQUENCE "event_seq_seq" RENAME TO "event_position_seq";

-- The fan-out cursor counted global seqs, which are the positions of those rows.
UPDATE "system_setting" SET "key" = 'webhook_fanout.position', "value" = jsonb_build_object('position', "value"->>'seq')
WHERE "key" = 'webhook_fanout.seq';

-- DropIndex
DROP INDEX "event_organization_id_seq_idx";

-- DropIndex
DROP INDEX "event_seq_key";

-- CreateIndex
CREATE UNIQUE INDEX "event_position_key" ON "event"("position");

-- CreateIndex
CREATE UNIQUE INDEX "event_organization_id_seq_key" ON "event"("organization_id", "seq");

-- CreateIndex
CREATE INDEX "event_organization_id_type_seq_idx" ON "event"("organization_id", "type", "seq");
