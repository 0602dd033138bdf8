-- CreateTable
CREATE TABLE "ToolCall" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "listId" TEXT NOT NULL,
    "itemId" TEXT NOT NULL,
    "flightKey" TEXT NOT NULL,
    "crow" TEXT NOT NULL,
    "taskType" TEXT NOT NULL,
    "step" INTEGER NOT NULL,
    "n" INTEGER NOT NULL,
    "modelCallId" TEXT NOT NULL,
    "offeredName" TEXT NOT NULL,
    "serverId" TEXT NOT NULL,
    "serverName" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "args" TEXT NOT NULL,
    "policy" TEXT NOT NULL,
    "readOnly" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL,
    "deadline" DATETIME,
    "reason" TEXT,
    "always" BOOLEAN NOT NULL DEFAULT false,
    "decidedAt" DATETIME,
    "decidedBy" TEXT NOT NULL DEFAULT '',
    "decidedByTokenId" TEXT,
    "decidedByTokenName" TEXT,
    "decidedByWebhookId" TEXT,
    "startedAt" DATETIME,
    "endedAt" DATETIME,
    "result" TEXT,
    "errorCode" TEXT,
    "landed" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "ToolPermission" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "crow" TEXT NOT NULL,
    "taskType" TEXT NOT NULL,
    "serverId" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "grantedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "grantedBy" TEXT NOT NULL DEFAULT '',
    "grantedByTokenId" TEXT,
    "grantedByTokenName" TEXT,
    "grantedByWebhookId" TEXT,
    "callId" TEXT NOT NULL,
    "revokedAt" DATETIME,
    "revokedBy" TEXT NOT NULL DEFAULT ''
);

-- CreateIndex
CREATE INDEX "ToolCall_itemId_idx" ON "ToolCall"("itemId");

-- CreateIndex
CREATE INDEX "ToolCall_status_deadline_idx" ON "ToolCall"("status", "deadline");

-- CreateIndex
CREATE UNIQUE INDEX "ToolCall_flightKey_n_key" ON "ToolCall"("flightKey", "n");

-- CreateIndex
CREATE INDEX "ToolPermission_crow_taskType_idx" ON "ToolPermission"("crow", "taskType");
