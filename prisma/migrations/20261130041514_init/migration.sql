-- CreateTable
CREATE TABLE "Event" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "stream" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "ts" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "TodoList" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "requester" TEXT NOT NULL,
    "nestId" TEXT NOT NULL DEFAULT 'todo',
    "text" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "tokenBudget" INTEGER NOT NULL,
    "tokensUsed" INTEGER NOT NULL DEFAULT 0,
    "banterCount" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" DATETIME
);

-- CreateTable
CREATE TABLE "Item" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "listId" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "stage" TEXT NOT NULL DEFAULT 'pending',
    "mode" TEXT,
    "taskType" TEXT,
    "subtasks" TEXT NOT NULL DEFAULT '[]',
    "reason" TEXT,
    "answer" TEXT,
    "crows" TEXT NOT NULL DEFAULT '[]',
    "skipReason" TEXT,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Item_listId_fkey" FOREIGN KEY ("listId") REFERENCES "TodoList" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Approval" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "itemId" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "deadline" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "decidedAt" DATETIME,
    CONSTRAINT "Approval_itemId_fkey" FOREIGN KEY ("itemId") REFERENCES "Item" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Trust" (
    "holder" TEXT NOT NULL,
    "taskType" TEXT NOT NULL,
    "level" INTEGER NOT NULL DEFAULT 0,
    "streak" INTEGER NOT NULL DEFAULT 0,
    "approvals" INTEGER NOT NULL DEFAULT 0,
    "rejections" INTEGER NOT NULL DEFAULT 0,
    "autos" INTEGER NOT NULL DEFAULT 0,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("holder", "taskType")
);

-- CreateTable
CREATE TABLE "TrustEntry" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "holder" TEXT NOT NULL,
    "taskType" TEXT NOT NULL,
    "verdict" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "from" INTEGER NOT NULL,
    "to" INTEGER NOT NULL,
    "streak" INTEGER NOT NULL,
    "at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "Requester" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "recent" TEXT NOT NULL DEFAULT '[]',
    "strikes" TEXT NOT NULL DEFAULT '[]',
    "pranks" INTEGER NOT NULL DEFAULT 0,
    "cooldownUntil" DATETIME
);

-- CreateTable
CREATE TABLE "Nest" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "NestMember" (
    "nestId" TEXT NOT NULL,
    "crow" TEXT NOT NULL,
    "position" INTEGER NOT NULL,

    PRIMARY KEY ("nestId", "crow"),
    CONSTRAINT "NestMember_nestId_fkey" FOREIGN KEY ("nestId") REFERENCES "Nest" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "SpunCrow" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "persona" TEXT NOT NULL,
    "trust" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "Message" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "nestId" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "author" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "to" TEXT NOT NULL DEFAULT '',
    "refersTo" TEXT NOT NULL DEFAULT '',
    "taggedBy" TEXT NOT NULL,
    "mode" TEXT NOT NULL DEFAULT '',
    "modeTaggedBy" TEXT NOT NULL DEFAULT '',
    "invited" INTEGER NOT NULL DEFAULT 0,
    "approvalPhrase" TEXT NOT NULL DEFAULT '',
    "approvedAt" DATETIME,
    "approvedBy" TEXT NOT NULL DEFAULT '',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Message_nestId_fkey" FOREIGN KEY ("nestId") REFERENCES "Nest" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Quarantine" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "crow" TEXT NOT NULL,
    "nestId" TEXT NOT NULL,
    "flagMsgId" TEXT NOT NULL,
    "askMsgId" TEXT NOT NULL,
    "referent" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'quarantined',
    "retired" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "liftedAt" DATETIME
);

-- CreateTable
CREATE TABLE "ClassifierAnswer" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "questionId" TEXT NOT NULL,
    "questionType" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "stateDigest" TEXT NOT NULL,
    "answer" TEXT NOT NULL,
    "probabilities" TEXT NOT NULL,
    "backend" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "latencyMs" INTEGER NOT NULL,
    "truth" TEXT NOT NULL DEFAULT '',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "Event_name_idx" ON "Event"("name");

-- CreateIndex
CREATE UNIQUE INDEX "Event_stream_seq_key" ON "Event"("stream", "seq");

-- CreateIndex
CREATE INDEX "TodoList_requester_status_idx" ON "TodoList"("requester", "status");

-- CreateIndex
CREATE UNIQUE INDEX "Item_listId_n_key" ON "Item"("listId", "n");

-- CreateIndex
CREATE INDEX "Approval_status_deadline_idx" ON "Approval"("status", "deadline");

-- CreateIndex
CREATE UNIQUE INDEX "Approval_itemId_target_key" ON "Approval"("itemId", "target");

-- CreateIndex
CREATE INDEX "TrustEntry_holder_taskType_idx" ON "TrustEntry"("holder", "taskType");

-- CreateIndex
CREATE UNIQUE INDEX "Message_nestId_n_key" ON "Message"("nestId", "n");

-- CreateIndex
CREATE INDEX "Quarantine_crow_status_idx" ON "Quarantine"("crow", "status");

-- CreateIndex
CREATE UNIQUE INDEX "Quarantine_crow_referent_key" ON "Quarantine"("crow", "referent");

-- CreateIndex
CREATE INDEX "ClassifierAnswer_questionId_idx" ON "ClassifierAnswer"("questionId");
