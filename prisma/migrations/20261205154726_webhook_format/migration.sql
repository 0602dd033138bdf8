-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_WebhookEndpoint" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "url" TEXT NOT NULL,
    "events" TEXT NOT NULL DEFAULT '',
    "description" TEXT NOT NULL DEFAULT '',
    "secret" TEXT NOT NULL,
    "previousSecret" TEXT,
    "previousSecretUntil" DATETIME,
    "disabledAt" DATETIME,
    "disabledReason" TEXT,
    "failingSince" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "format" TEXT NOT NULL DEFAULT 'standard'
);
INSERT INTO "new_WebhookEndpoint" ("createdAt", "description", "disabledAt", "disabledReason", "events", "failingSince", "id", "previousSecret", "previousSecretUntil", "secret", "url") SELECT "createdAt", "description", "disabledAt", "disabledReason", "events", "failingSince", "id", "previousSecret", "previousSecretUntil", "secret", "url" FROM "WebhookEndpoint";
DROP TABLE "WebhookEndpoint";
ALTER TABLE "new_WebhookEndpoint" RENAME TO "WebhookEndpoint";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
