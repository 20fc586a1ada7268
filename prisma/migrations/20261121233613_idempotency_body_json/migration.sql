-- AlterTable
ALTER TABLE "idempotency_record" ALTER COLUMN "response_body" SET DATA TYPE JSON;
