-- CreateTable
CREATE TABLE "Obligation" (
    "id" TEXT NOT NULL,
    "requestId" TEXT NOT NULL,
    "nestId" TEXT NOT NULL,
    "respondent" TEXT NOT NULL DEFAULT '',
    "stage" TEXT NOT NULL DEFAULT 'awaiting_claim',
    "claimedAt" TIMESTAMP(3),
    "nudgeId" TEXT NOT NULL DEFAULT '',
    "nudgedAt" TIMESTAMP(3),
    "answerId" TEXT NOT NULL DEFAULT '',
    "closedAt" TIMESTAMP(3),
    "ownerId" TEXT,
    "leaseUntil" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Obligation_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Obligation_requestId_idx" ON "Obligation"("requestId");

-- CreateIndex
CREATE INDEX "Obligation_stage_leaseUntil_idx" ON "Obligation"("stage", "leaseUntil");
