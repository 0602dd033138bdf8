-- CreateTable
CREATE TABLE "IdempotentAnswer" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "fingerprint" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "IdempotentAnswer_createdAt_idx" ON "IdempotentAnswer"("createdAt");
