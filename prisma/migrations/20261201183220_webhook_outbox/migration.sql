-- CreateTable
CREATE TABLE "WebhookOutbox" (
    "eventId" INTEGER NOT NULL PRIMARY KEY,
    "stream" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL
);
