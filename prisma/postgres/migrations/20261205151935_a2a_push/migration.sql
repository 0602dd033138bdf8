-- CreateTable
CREATE TABLE "A2aPushConfig" (
    "id" TEXT NOT NULL,
    "taskId" TEXT NOT NULL,
    "configId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "authScheme" TEXT NOT NULL DEFAULT '',
    "authCredentials" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "A2aPushConfig_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "A2aPush" (
    "id" SERIAL NOT NULL,
    "taskId" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "A2aPush_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "A2aPushConfig_taskId_configId_key" ON "A2aPushConfig"("taskId", "configId");

-- CreateIndex
CREATE INDEX "A2aPush_taskId_idx" ON "A2aPush"("taskId");
