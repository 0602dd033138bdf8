-- AlterTable
ALTER TABLE "TodoList" ADD COLUMN "cancelledAt" DATETIME;
ALTER TABLE "TodoList" ADD COLUMN "cancelledBy" TEXT;
