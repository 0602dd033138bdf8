-- CreateTable
CREATE TABLE "IdempotentAnswer" (
    "key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IdempotentAnswer_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "IdempotentAnswer_createdAt_idx" ON "IdempotentAnswer"("createdAt");
