-- AlterTable (added in place: a redefinition would copy every item and approval)
ALTER TABLE "Item" ADD COLUMN "tries" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Item" ADD COLUMN "rework" TEXT;
ALTER TABLE "Approval" ADD COLUMN "round" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "Approval" ADD COLUMN "rework" TEXT;
