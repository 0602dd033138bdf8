-- AlterTable
ALTER TABLE "Approval" ADD COLUMN "edit" TEXT;
