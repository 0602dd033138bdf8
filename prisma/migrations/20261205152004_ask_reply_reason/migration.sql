-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Message" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "nestId" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "author" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "to" TEXT NOT NULL DEFAULT '',
    "refersTo" TEXT NOT NULL DEFAULT '',
    "taggedBy" TEXT NOT NULL,
    "mode" TEXT NOT NULL DEFAULT '',
    "modeTaggedBy" TEXT NOT NULL DEFAULT '',
    "invited" INTEGER NOT NULL DEFAULT 0,
    "approvalPhrase" TEXT NOT NULL DEFAULT '',
    "approvedAt" DATETIME,
    "approvedBy" TEXT NOT NULL DEFAULT '',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "reason" TEXT NOT NULL DEFAULT '',
    CONSTRAINT "Message_nestId_fkey" FOREIGN KEY ("nestId") REFERENCES "Nest" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Message" ("approvalPhrase", "approvedAt", "approvedBy", "author", "createdAt", "id", "invited", "kind", "mode", "modeTaggedBy", "n", "nestId", "refersTo", "taggedBy", "text", "to") SELECT "approvalPhrase", "approvedAt", "approvedBy", "author", "createdAt", "id", "invited", "kind", "mode", "modeTaggedBy", "n", "nestId", "refersTo", "taggedBy", "text", "to" FROM "Message";
DROP TABLE "Message";
ALTER TABLE "new_Message" RENAME TO "Message";
CREATE UNIQUE INDEX "Message_nestId_n_key" ON "Message"("nestId", "n");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
