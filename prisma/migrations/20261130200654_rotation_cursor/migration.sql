-- CreateTable
CREATE TABLE "RotationCursor" (
    "nestId" TEXT NOT NULL,
    "ring" TEXT NOT NULL,
    "lastCrow" TEXT NOT NULL,
    "updatedAt" DATETIME NOT NULL,

    PRIMARY KEY ("nestId", "ring")
);
