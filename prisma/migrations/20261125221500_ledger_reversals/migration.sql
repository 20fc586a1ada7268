-- Ledger reversals (ADR 0009): a compensating entry says why it was made, and an entry is reversed at most once.
ALTER TABLE "ledger_entry" ADD COLUMN "reason" TEXT;
CREATE UNIQUE INDEX "ledger_entry_one_reversal" ON "ledger_entry"("reverses_id") WHERE "reverses_id" IS NOT NULL;
