-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_ToolCall" (
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
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "nestId" TEXT NOT NULL DEFAULT ''
);
INSERT INTO "new_ToolCall" ("always", "args", "createdAt", "crow", "deadline", "decidedAt", "decidedBy", "decidedByTokenId", "decidedByTokenName", "decidedByWebhookId", "endedAt", "errorCode", "flightKey", "id", "itemId", "landed", "listId", "modelCallId", "n", "offeredName", "policy", "readOnly", "reason", "result", "serverId", "serverName", "startedAt", "status", "step", "taskType", "tool") SELECT "always", "args", "createdAt", "crow", "deadline", "decidedAt", "decidedBy", "decidedByTokenId", "decidedByTokenName", "decidedByWebhookId", "endedAt", "errorCode", "flightKey", "id", "itemId", "landed", "listId", "modelCallId", "n", "offeredName", "policy", "readOnly", "reason", "result", "serverId", "serverName", "startedAt", "status", "step", "taskType", "tool" FROM "ToolCall";
DROP TABLE "ToolCall";
ALTER TABLE "new_ToolCall" RENAME TO "ToolCall";
CREATE INDEX "ToolCall_itemId_idx" ON "ToolCall"("itemId");
CREATE INDEX "ToolCall_status_deadline_idx" ON "ToolCall"("status", "deadline");
CREATE UNIQUE INDEX "ToolCall_flightKey_n_key" ON "ToolCall"("flightKey", "n");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
