-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "reason" TEXT NOT NULL DEFAULT '';
