-- CreateTable
CREATE TABLE "RotationCursor" (
    "nestId" TEXT NOT NULL,
    "ring" TEXT NOT NULL,
    "lastCrow" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "RotationCursor_pkey" PRIMARY KEY ("nestId","ring")
);
