-- CreateTable
CREATE TABLE "ProviderWait" (
    "itemId" TEXT NOT NULL PRIMARY KEY,
    "since" DATETIME NOT NULL,
    "deadline" DATETIME NOT NULL
);
