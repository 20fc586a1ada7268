-- Events carry the brand the causing request selected (null: organization-level;
-- existing rows stay null). The feed's brand and subject filters each walk an
-- index in seq order (src/domain/event/filter.ts).

-- AlterTable
ALTER TABLE "event" ADD COLUMN     "brand_id" TEXT;

-- CreateIndex (partial: organization-level events, brand NULL, never match a brand
-- filter, so they do not pay for this index on the write path)
CREATE INDEX "event_organization_id_brand_id_seq_idx" ON "event"("organization_id", "brand_id", "seq") WHERE "brand_id" IS NOT NULL;

-- CreateIndex
CREATE INDEX "event_organization_id_subject_type_seq_idx" ON "event"("organization_id", "subject_type", "seq");

-- CreateIndex
CREATE INDEX "event_organization_id_subject_id_seq_idx" ON "event"("organization_id", "subject_id", "seq");
