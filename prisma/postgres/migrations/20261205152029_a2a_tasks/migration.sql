-- CreateTable
CREATE TABLE "A2aTask" (
    "id" TEXT NOT NULL,
    "listId" TEXT NOT NULL,
    "contextId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "A2aTask_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "A2aTask_listId_key" ON "A2aTask"("listId");
