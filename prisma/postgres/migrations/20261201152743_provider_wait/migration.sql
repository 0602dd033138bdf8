-- CreateTable
CREATE TABLE "ProviderWait" (
    "itemId" TEXT NOT NULL,
    "since" TIMESTAMP(3) NOT NULL,
    "deadline" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ProviderWait_pkey" PRIMARY KEY ("itemId")
);
