-- AlterTable
ALTER TABLE "Approval" ADD COLUMN "reason" TEXT;

-- AlterTable
ALTER TABLE "TrustEntry" ADD COLUMN "reason" TEXT;
