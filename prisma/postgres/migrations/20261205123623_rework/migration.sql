-- AlterTable
ALTER TABLE "Approval" ADD COLUMN     "rework" TEXT,
ADD COLUMN     "round" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Item" ADD COLUMN     "rework" TEXT,
ADD COLUMN     "tries" INTEGER NOT NULL DEFAULT 0;
