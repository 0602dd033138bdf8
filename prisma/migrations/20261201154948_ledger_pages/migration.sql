-- DropIndex
DROP INDEX "TrustEntry_holder_taskType_idx";

-- CreateIndex
CREATE INDEX "TodoList_createdAt_idx" ON "TodoList"("createdAt");

-- CreateIndex
CREATE INDEX "TrustEntry_holder_taskType_id_idx" ON "TrustEntry"("holder", "taskType", "id");
