-- CreateTable
CREATE TABLE "Obligation" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "requestId" TEXT NOT NULL,
    "nestId" TEXT NOT NULL,
    "respondent" TEXT NOT NULL DEFAULT '',
    "stage" TEXT NOT NULL DEFAULT 'awaiting_claim',
    "claimedAt" DATETIME,
    "nudgeId" TEXT NOT NULL DEFAULT '',
    "nudgedAt" DATETIME,
    "answerId" TEXT NOT NULL DEFAULT '',
    "closedAt" DATETIME,
    "ownerId" TEXT,
    "leaseUntil" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "Obligation_requestId_idx" ON "Obligation"("requestId");

-- CreateIndex
CREATE INDEX "Obligation_stage_leaseUntil_idx" ON "Obligation"("stage", "leaseUntil");
