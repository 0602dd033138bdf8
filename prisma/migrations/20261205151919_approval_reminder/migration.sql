-- AlterTable
ALTER TABLE "Approval" ADD COLUMN "remindedAt" DATETIME;
