-- CreateTable
CREATE TABLE "A2aPushConfig" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "taskId" TEXT NOT NULL,
    "configId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "authScheme" TEXT NOT NULL DEFAULT '',
    "authCredentials" TEXT NOT NULL DEFAULT '',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "A2aPush" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "taskId" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE UNIQUE INDEX "A2aPushConfig_taskId_configId_key" ON "A2aPushConfig"("taskId", "configId");

-- CreateIndex
CREATE INDEX "A2aPush_taskId_idx" ON "A2aPush"("taskId");
