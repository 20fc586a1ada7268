-- AlterTable
ALTER TABLE "webhook_endpoint" ADD COLUMN     "config" JSONB,
ADD COLUMN     "type" TEXT NOT NULL DEFAULT 'webhook',
ADD COLUMN     "url_ciphertext" TEXT;
