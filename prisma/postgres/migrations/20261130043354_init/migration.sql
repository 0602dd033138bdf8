-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "Event" (
    "id" SERIAL NOT NULL,
    "stream" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "ts" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Event_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TodoList" (
    "id" TEXT NOT NULL,
    "requester" TEXT NOT NULL,
    "nestId" TEXT NOT NULL DEFAULT 'todo',
    "text" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "tokenBudget" INTEGER NOT NULL,
    "tokensUsed" INTEGER NOT NULL DEFAULT 0,
    "banterCount" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "TodoList_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Item" (
    "id" TEXT NOT NULL,
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
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Item_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Approval" (
    "id" SERIAL NOT NULL,
    "itemId" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "deadline" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "decidedAt" TIMESTAMP(3),

    CONSTRAINT "Approval_pkey" PRIMARY KEY ("id")
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
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Trust_pkey" PRIMARY KEY ("holder","taskType")
);

-- CreateTable
CREATE TABLE "TrustEntry" (
    "id" SERIAL NOT NULL,
    "holder" TEXT NOT NULL,
    "taskType" TEXT NOT NULL,
    "verdict" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "from" INTEGER NOT NULL,
    "to" INTEGER NOT NULL,
    "streak" INTEGER NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TrustEntry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Requester" (
    "name" TEXT NOT NULL,
    "recent" TEXT NOT NULL DEFAULT '[]',
    "strikes" TEXT NOT NULL DEFAULT '[]',
    "pranks" INTEGER NOT NULL DEFAULT 0,
    "cooldownUntil" TIMESTAMP(3),

    CONSTRAINT "Requester_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "Nest" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Nest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "NestMember" (
    "nestId" TEXT NOT NULL,
    "crow" TEXT NOT NULL,
    "position" INTEGER NOT NULL,

    CONSTRAINT "NestMember_pkey" PRIMARY KEY ("nestId","crow")
);

-- CreateTable
CREATE TABLE "SpunCrow" (
    "name" TEXT NOT NULL,
    "persona" TEXT NOT NULL,
    "trust" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SpunCrow_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "Message" (
    "id" TEXT NOT NULL,
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
    "approvedAt" TIMESTAMP(3),
    "approvedBy" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Quarantine" (
    "id" SERIAL NOT NULL,
    "crow" TEXT NOT NULL,
    "nestId" TEXT NOT NULL,
    "flagMsgId" TEXT NOT NULL,
    "askMsgId" TEXT NOT NULL,
    "referent" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'quarantined',
    "retired" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "liftedAt" TIMESTAMP(3),

    CONSTRAINT "Quarantine_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ClassifierAnswer" (
    "id" SERIAL NOT NULL,
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
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ClassifierAnswer_pkey" PRIMARY KEY ("id")
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

-- AddForeignKey
ALTER TABLE "Item" ADD CONSTRAINT "Item_listId_fkey" FOREIGN KEY ("listId") REFERENCES "TodoList"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Approval" ADD CONSTRAINT "Approval_itemId_fkey" FOREIGN KEY ("itemId") REFERENCES "Item"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NestMember" ADD CONSTRAINT "NestMember_nestId_fkey" FOREIGN KEY ("nestId") REFERENCES "Nest"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Message" ADD CONSTRAINT "Message_nestId_fkey" FOREIGN KEY ("nestId") REFERENCES "Nest"("id") ON DELETE CASCADE ON UPDATE CASCADE;
