-- CreateTable
CREATE TABLE "WebhookOutbox" (
    "eventId" INTEGER NOT NULL,
    "stream" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "WebhookOutbox_pkey" PRIMARY KEY ("eventId")
);
