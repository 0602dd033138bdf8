-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "remindedAt" TIMESTAMP(3);
