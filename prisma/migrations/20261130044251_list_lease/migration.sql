-- AlterTable
ALTER TABLE "TodoList" ADD COLUMN "leaseUntil" DATETIME;
ALTER TABLE "TodoList" ADD COLUMN "ownerId" TEXT;

-- CreateIndex
CREATE INDEX "TodoList_status_leaseUntil_idx" ON "TodoList"("status", "leaseUntil");
